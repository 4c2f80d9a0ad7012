import { ActivityLog } from '@/features/audit/activity-log';
import { useBlocked } from '@/features/projects/role';
import { ProjectSection } from './project-section';

export function ActivityRoute() {
  return (
    <ProjectSection
      wide
      title="Activity"
      about="Who did what in this project, newest first: members, files, sources, questions, reviews, shares and exports. The log is only ever added to."
    >
      {(projectId) => <Activity projectId={projectId} />}
    </ProjectSection>
  );
}

/** The log, for owners; a sentence saying why not for anyone else. */
function Activity({ projectId }: { projectId: string }) {
  const blocked = useBlocked('owner', 'read the activity log');
  if (blocked) {
    return (
      <p className="rounded-lg border border-dashed px-4 py-6 text-sm text-muted-foreground" data-testid="activity-blocked">
        {blocked}
      </p>
    );
  }
  return <ActivityLog projectId={projectId} />;
}
