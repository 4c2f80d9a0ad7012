import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { JobPage } from '@/features/jobs/job-page';
import { JobsList } from '@/features/jobs/jobs-list';
import { projectQuery } from '@/features/projects/queries';
import { ProjectRoleProvider } from '@/features/projects/role';
import { ProjectSection } from './project-section';

/** A project's jobs. */
export function JobsRoute() {
  return (
    <ProjectSection
      title="Jobs"
      about="Sessions made into scripts that run again without the model, on demand or on a schedule, guarded by data checks, with alerts that say what changed."
    >
      {(projectId) => <JobsList projectId={projectId} />}
    </ProjectSection>
  );
}

/** One job of a project. */
export function JobRoute() {
  const { projectId = '', jobId = '' } = useParams();
  const project = useQuery(projectQuery(projectId));
  if (project.error) return <p className="p-8 text-sm text-muted-foreground">This project could not be found.</p>;
  return (
    <ProjectRoleProvider value={project.data?.role ?? null}>
      <div className="h-full overflow-y-auto">
        <JobPage key={jobId} projectId={projectId} jobId={jobId} projectName={project.data?.name} />
      </div>
    </ProjectRoleProvider>
  );
}
