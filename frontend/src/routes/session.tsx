import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { MakeJobButton } from '@/features/jobs/make-job-dialog';
import { Presence } from '@/features/live/presence';
import { projectQuery } from '@/features/projects/queries';
import { ProjectRoleProvider, RoleBadge } from '@/features/projects/role';
import { SessionChat } from '@/features/runs/session-chat';
import { AutonomySwitch } from '@/features/sessions/autonomy-switch';
import { sessionQuery } from '@/features/sessions/queries';
import { SessionMenu } from '@/features/sessions/session-menu';
import { formatNumber, formatUsage } from '@/lib/utils';

export function SessionRoute() {
  const { projectId = '', sessionId = '' } = useParams();
  const session = useQuery(sessionQuery(sessionId));
  const project = useQuery(projectQuery(projectId));
  if (session.error) return <p className="p-8 text-sm text-muted-foreground">This session could not be found.</p>;
  const role = project.data?.role ?? null;
  return (
    <ProjectRoleProvider value={role}>
      <div className="flex h-full flex-col">
        {/* On a phone the title takes a line of its own under the project, so it is read whole, not as "ACC…". */}
        <header className="flex flex-wrap items-center gap-x-2 gap-y-1 border-b px-4 py-2 text-sm sm:flex-nowrap sm:px-6 sm:py-3">
          <Link to={`/projects/${projectId}`} className="max-w-[40%] shrink-0 truncate text-muted-foreground hover:text-foreground">
            {project.data?.name ?? '…'}
          </Link>
          <span className="hidden text-muted-foreground sm:inline">/</span>
          <h1
            className="order-last line-clamp-2 w-full font-medium break-words sm:order-none sm:line-clamp-none sm:w-auto sm:min-w-12 sm:truncate"
            title={session.data?.title ?? undefined}
            data-testid="session-title"
          >
            {session.data?.title || 'Untitled session'}
          </h1>
          <span className="ml-auto" />
          <Presence sessionId={sessionId} />
          {role && role !== 'owner' && <RoleBadge role={role} />}
          {session.data && session.data.tokens_in + session.data.tokens_out > 0 && (
            <span
              className="hidden shrink-0 pl-2 text-xs whitespace-nowrap text-muted-foreground tabular-nums sm:inline"
              title={`This session's questions so far: ${formatNumber(session.data.tokens_in)} tokens in, ${formatNumber(session.data.tokens_out)} out`}
              data-testid="session-usage"
            >
              {formatUsage(session.data)}
            </span>
          )}
          {session.data && <AutonomySwitch session={session.data} className="ml-1 sm:ml-3 sm:border-l sm:pl-3" />}
          {session.data && <MakeJobButton session={session.data} className="ml-1 sm:ml-3" />}
          {session.data && <SessionMenu key={session.data.id} session={session.data} className="-my-1 -mr-2" />}
        </header>
        <div className="min-h-0 flex-1">
          <SessionChat key={sessionId} projectId={projectId} sessionId={sessionId} />
        </div>
      </div>
    </ProjectRoleProvider>
  );
}
