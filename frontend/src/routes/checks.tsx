import { ChecksPage } from '@/features/checks/checks-page';
import { ProjectSection } from './project-section';

export function ChecksRoute() {
  return (
    <ProjectSection
      title="Checks"
      about="Questions with the answers they must get, asked through the product as real questions. Run them before and after approving knowledge to see its effect."
    >
      {(projectId) => <ChecksPage projectId={projectId} />}
    </ProjectSection>
  );
}
