import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { projectQuery } from '@/features/projects/queries';
import { SessionChat } from '@/features/runs/session-chat';
import { sessionQuery } from '@/features/sessions/queries';
import { formatNumber, formatUsage } from '@/lib/utils';

export function SessionRoute() {
  const { projectId = '', sessionId = '' } = useParams();
  const session = useQuery(sessionQuery(sessionId));
  const project = useQuery(projectQuery(projectId));
  if (session.error) return <p className="p-8 text-sm text-muted-foreground">This session could not be found.</p>;
  return (
    <div className="flex h-full flex-col">
      <header className="flex items-center gap-2 border-b px-6 py-3 text-sm">
        <Link to={`/projects/${projectId}`} className="max-w-[40%] shrink-0 truncate text-muted-foreground hover:text-foreground">
          {project.data?.name ?? '…'}
        </Link>
        <span className="text-muted-foreground">/</span>
        <h1 className="truncate font-medium" data-testid="session-title">
          {session.data?.title || 'Untitled session'}
        </h1>
        {session.data && session.data.tokens_in + session.data.tokens_out > 0 && (
          <span
            className="ml-auto shrink-0 pl-2 text-xs whitespace-nowrap text-muted-foreground tabular-nums"
            title={`This session's questions so far: ${formatNumber(session.data.tokens_in)} tokens in, ${formatNumber(session.data.tokens_out)} out`}
            data-testid="session-usage"
          >
            {formatUsage(session.data)}
          </span>
        )}
      </header>
      <div className="min-h-0 flex-1">
        <SessionChat key={sessionId} projectId={projectId} sessionId={sessionId} />
      </div>
    </div>
  );
}
