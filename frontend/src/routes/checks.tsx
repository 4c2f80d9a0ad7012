import { useQuery } from '@tanstack/react-query';
import { ChevronLeft } from 'lucide-react';
import { Link, useParams } from 'react-router';
import { ChecksPage } from '@/features/checks/checks-page';
import { projectQuery } from '@/features/projects/queries';
import { ProjectRoleProvider } from '@/features/projects/role';

export function ChecksRoute() {
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
            <h1 className="text-2xl font-semibold tracking-tight">Checks</h1>
            <p className="text-sm text-muted-foreground">
              Questions with the answers they must get, asked through the product as real questions. Run them before and after approving
              knowledge to see its effect.
            </p>
          </header>
          {project.data && <ChecksPage projectId={projectId} />}
        </div>
      </div>
    </ProjectRoleProvider>
  );
}
