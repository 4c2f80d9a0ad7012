import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { projectQuery } from '@/features/projects/queries';
import { SessionChat } from '@/features/runs/session-chat';
import { sessionQuery } from '@/features/sessions/queries';

export function SessionRoute() {
  const { projectId = '', sessionId = '' } = useParams();
  const session = useQuery(sessionQuery(sessionId));
  const project = useQuery(projectQuery(projectId));
  if (session.error) return <p className="p-8 text-sm text-muted-foreground">This session could not be found.</p>;
  return (
    <div className="flex h-full flex-col">
      <header className="flex items-center gap-2 border-b px-6 py-3 text-sm">
        <Link to={`/projects/${projectId}`} className="text-muted-foreground hover:text-foreground">
          {project.data?.name ?? '…'}
        </Link>
        <span className="text-muted-foreground">/</span>
        <h1 className="truncate font-medium" data-testid="session-title">
          {session.data?.title || 'Untitled session'}
        </h1>
      </header>
      <div className="min-h-0 flex-1">
        <SessionChat key={sessionId} projectId={projectId} sessionId={sessionId} />
      </div>
    </div>
  );
}
