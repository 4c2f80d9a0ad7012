import { useQuery } from '@tanstack/react-query';
import { ChevronLeft } from 'lucide-react';
import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { projectQuery } from '@/features/projects/queries';
import { ProjectRoleProvider } from '@/features/projects/role';
import { cn } from '@/lib/utils';

/** A page of a project beside its main one (its jobs, checks, knowledge, activity): a link back
 * to the project, the page's title and what it is for, and its content once the project is
 * known, under the user's role in it (`wide` for a page of tables). */
export function ProjectSection({
  title,
  about,
  wide = false,
  children,
}: {
  title: string;
  about: ReactNode;
  wide?: boolean;
  children: (projectId: string) => ReactNode;
}) {
  const { projectId = '' } = useParams();
  const project = useQuery(projectQuery(projectId));
  if (project.error) return <p className="p-8 text-sm text-muted-foreground">This project could not be found.</p>;
  return (
    <ProjectRoleProvider value={project.data?.role ?? null}>
      <div className="h-full overflow-y-auto">
        <div className={cn('mx-auto space-y-6 px-4 py-8 md:px-6', wide ? 'max-w-5xl' : 'max-w-4xl')}>
          <header className="space-y-1">
            <Link to={`/projects/${projectId}`} className="inline-flex items-center gap-1 text-sm text-muted-foreground hover:text-foreground">
              <ChevronLeft className="size-4" /> {project.data?.name ?? '…'}
            </Link>
            <h1 className="text-2xl font-semibold tracking-tight">{title}</h1>
            <p className="text-sm text-muted-foreground">{about}</p>
          </header>
          {project.data && children(projectId)}
        </div>
      </div>
    </ProjectRoleProvider>
  );
}
