import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { CompareView } from '@/features/branches/compare-view';
import { projectQuery } from '@/features/projects/queries';
import { ProjectRoleProvider } from '@/features/projects/role';

/** /projects/:projectId/compare/:leftId/:rightId — a link per comparison. */
export function CompareRoute() {
  const { projectId = '', leftId = '', rightId = '' } = useParams();
  const project = useQuery(projectQuery(projectId));
  return (
    <ProjectRoleProvider value={project.data?.role ?? null}>
      <CompareView key={`${leftId}/${rightId}`} projectId={projectId} leftId={leftId} rightId={rightId} />
    </ProjectRoleProvider>
  );
}
