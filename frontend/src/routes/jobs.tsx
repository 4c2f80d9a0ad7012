import { useQuery } from '@tanstack/react-query';
import { ChevronLeft } from 'lucide-react';
import { Link, useParams } from 'react-router';
import { JobPage } from '@/features/jobs/job-page';
import { JobsList } from '@/features/jobs/jobs-list';
import { projectQuery } from '@/features/projects/queries';
import { ProjectRoleProvider } from '@/features/projects/role';

/** A project's jobs. */
export function JobsRoute() {
  const { projectId = '' } = useParams();
  const project = useQuery(projectQuery(projectId));
  if (project.error) return <p className="p-8 text-sm text-muted-foreground">This project could not be found.</p>;
  return (
    <ProjectRoleProvider value={project.data?.role ?? null}>
      <div className="h-full overflow-y-auto">
        <div className="mx-auto max-w-4xl space-y-6 px-4 py-8 md:px-6">
          <header className="space-y-1">
            <Link to={`/projects/${projectId}`} className="inline-flex items-center gap-1 text-sm text-muted-foreground hover:text-foreground">
              <ChevronLeft className="size-4" /> {project.data?.name ?? '…'}
            </Link>
            <h1 className="text-2xl font-semibold tracking-tight">Jobs</h1>
            <p className="text-sm text-muted-foreground">
              Sessions made into scripts that run again without the model, on demand or on a schedule, guarded by data checks, with alerts that say what
              changed.
            </p>
          </header>
          {project.data && <JobsList projectId={projectId} />}
        </div>
      </div>
    </ProjectRoleProvider>
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
