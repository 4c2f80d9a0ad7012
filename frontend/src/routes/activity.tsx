import { useQuery } from '@tanstack/react-query';
import { ChevronLeft } from 'lucide-react';
import { Link, useParams } from 'react-router';
import { ActivityLog } from '@/features/audit/activity-log';
import { projectQuery } from '@/features/projects/queries';
import { blockedFor } from '@/features/projects/role';

export function ActivityRoute() {
  const { projectId = '' } = useParams();
  const project = useQuery(projectQuery(projectId));
  if (project.error) return <p className="p-8 text-sm text-muted-foreground">This project could not be found.</p>;
  const blocked = blockedFor(project.data?.role, 'owner', 'read the activity log');
  return (
    <div className="h-full overflow-y-auto">
      <div className="mx-auto max-w-5xl space-y-6 px-4 py-8 md:px-6">
        <header className="space-y-1">
          <Link to={`/projects/${projectId}`} className="inline-flex items-center gap-1 text-sm text-muted-foreground hover:text-foreground">
            <ChevronLeft className="size-4" /> {project.data?.name ?? '…'}
          </Link>
          <h1 className="text-2xl font-semibold tracking-tight">Activity</h1>
          <p className="text-sm text-muted-foreground">
            Who did what in this project, newest first: members, files, sources, questions, reviews, shares and exports. The log is only ever
            added to.
          </p>
        </header>
        {blocked ? (
          <p className="rounded-lg border border-dashed px-4 py-6 text-sm text-muted-foreground" data-testid="activity-blocked">
            {blocked}
          </p>
        ) : (
          project.data && <ActivityLog projectId={projectId} />
        )}
      </div>
    </div>
  );
}
