import { useQuery } from '@tanstack/react-query';
import { ChevronLeft } from 'lucide-react';
import { Link, useParams, useSearchParams } from 'react-router';
import { KnowledgePanel } from '@/features/knowledge/knowledge-panel';
import type { KnowledgeStatus } from '@/features/knowledge/types';
import { projectQuery } from '@/features/projects/queries';
import { ProjectRoleProvider } from '@/features/projects/role';

const statusParam = (s: string | null): KnowledgeStatus | null => (s === 'proposed' || s === 'approved' || s === 'rejected' ? s : null);

export function KnowledgeRoute() {
  const { projectId = '' } = useParams();
  const [params] = useSearchParams();
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
            <h1 className="text-2xl font-semibold tracking-tight">What the team knows</h1>
            <p className="text-sm text-muted-foreground">
              Definitions, rules, column meanings, verified examples and lessons, given to the agent with the questions they apply to.
              Proposals reach no question until an editor approves them.
            </p>
          </header>
          {project.data && <KnowledgePanel projectId={projectId} focus={params.get('item')} initialStatus={statusParam(params.get('status'))} />}
        </div>
      </div>
    </ProjectRoleProvider>
  );
}
