import { useSearchParams } from 'react-router';
import { KnowledgePanel } from '@/features/knowledge/knowledge-panel';
import type { KnowledgeStatus } from '@/features/knowledge/types';
import { ProjectSection } from './project-section';

const statusParam = (s: string | null): KnowledgeStatus | null => (s === 'proposed' || s === 'approved' || s === 'rejected' ? s : null);

export function KnowledgeRoute() {
  const [params] = useSearchParams();
  return (
    <ProjectSection
      title="What the team knows"
      about="Definitions, rules, column meanings, verified examples and lessons, given to the agent with the questions they apply to. Proposals reach no question until an editor approves them."
    >
      {(projectId) => <KnowledgePanel projectId={projectId} focus={params.get('item')} initialStatus={statusParam(params.get('status'))} />}
    </ProjectSection>
  );
}
