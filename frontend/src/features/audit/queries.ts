import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { listAuditEvents } from '@/client';

/** Events on one page of the activity log. */
export const AUDIT_PAGE = 50;

export const auditKeys = {
  project: (projectId: string) => ['audit', projectId] as const,
  page: (projectId: string, page: number, action: string | null) => ['audit', projectId, { page, action }] as const,
};

/** One page of a project's audit log, newest first, of one action or all (owners only). */
export const auditQuery = (projectId: string, page: number, action: string | null) =>
  queryOptions({
    queryKey: auditKeys.page(projectId, page, action),
    queryFn: async () =>
      (
        await listAuditEvents({
          path: { project_id: projectId },
          query: { limit: AUDIT_PAGE, offset: page * AUDIT_PAGE, ...(action ? { action } : {}) },
        })
      ).data!,
    // The page being left stays on screen until the next one arrives.
    placeholderData: keepPreviousData,
    meta: { silent: true },
  });
