import { queryOptions } from '@tanstack/react-query';
import {
  listFiles,
  listVersions,
  previewFile,
  profileFile,
  type FilterCondition,
  type PreviewFileData,
} from '@/client';
import { byName } from '@/lib/natural-sort';

/** Rows on a page of a preview: the server's default, so a first page is the preview it keeps. */
export const PREVIEW_PAGE_ROWS = 50;

/** Which rows of the whole table a preview shows: a page, sorted over every row, under a header row. */
export type PreviewWindow = {
  offset: number;
  limit: number;
  sort: string | null;
  order: 'asc' | 'desc';
  /** The row of column names, counted from 0; null: the one the server detects. */
  headerRow: number | null;
  /** Only the rows that meet all these conditions (the server filters the whole file). */
  filter?: FilterCondition[];
};

export const fileKeys = {
  project: (projectId: string) => ['files', 'project', projectId] as const,
  preview: (fileId: string, sha: string, sheet: string | null = null, window: PreviewWindow | null = null) =>
    ['files', 'preview', fileId, sha, sheet, window] as const,
  profile: (fileId: string, sha: string, sheet: string | null = null, headerRow: number | null = null) =>
    ['files', 'profile', fileId, sha, sheet, headerRow] as const,
  versions: (fileId: string) => ['files', 'versions', fileId] as const,
  allVersions: ['files', 'versions'] as const,
};

export const filesQuery = (projectId: string) =>
  queryOptions({
    queryKey: fileKeys.project(projectId),
    queryFn: async () => {
      const files = (await listFiles({ path: { project_id: projectId }, query: { limit: 500 } })).data!;
      // Listed as a person sorts names: "big.csv" before "Q3 report.xlsx", "file 2" before "file 10".
      return { ...files, items: byName(files.items) };
    },
  });

function previewParams(sheet: string | null, window: PreviewWindow | null) {
  const query: NonNullable<PreviewFileData['query']> = {};
  if (sheet !== null) query.sheet = sheet;
  if (window) {
    if (window.offset) query.offset = window.offset;
    if (window.limit !== PREVIEW_PAGE_ROWS) query.limit = window.limit;
    if (window.sort !== null) Object.assign(query, { sort: window.sort, order: window.order });
    if (window.headerRow !== null) query.header_row = window.headerRow;
    if (window.filter?.length) query.filter = JSON.stringify(window.filter);
  }
  return Object.keys(query).length ? query : undefined;
}

/**
 * Rows of a file (of one sheet of a workbook: null for the first): the first 50, or a window of the
 * whole table, sorted over every row by the server. The same bytes preview the same.
 */
export const previewQuery = (fileId: string, sha: string, sheet: string | null = null, window: PreviewWindow | null = null) =>
  queryOptions({
    queryKey: fileKeys.preview(fileId, sha, sheet, window),
    queryFn: async () => (await previewFile({ path: { file_id: fileId }, query: previewParams(sheet, window) })).data!,
    staleTime: Infinity,
    // While the server checks the whole file's column types, ask again until its decision is in.
    refetchInterval: (query) => (query.state.data?.kinds_pending ? 3000 : false),
    meta: { silent: true },
  });

/** Each column's type, missing and distinct counts, range or top values (of one sheet of a workbook, under a header row). */
export const profileQuery = (fileId: string, sha: string, sheet: string | null = null, headerRow: number | null = null) =>
  queryOptions({
    queryKey: fileKeys.profile(fileId, sha, sheet, headerRow),
    queryFn: async () => {
      const query = { ...(sheet === null ? {} : { sheet }), ...(headerRow === null ? {} : { header_row: headerRow }) };
      return (await profileFile({ path: { file_id: fileId }, query: Object.keys(query).length ? query : undefined })).data!;
    },
    staleTime: Infinity,
    meta: { silent: true },
  });

/** The versions kept of a file, newest (the current one) first. */
export const versionsQuery = (fileId: string) =>
  queryOptions({
    queryKey: fileKeys.versions(fileId),
    queryFn: async () => (await listVersions({ path: { file_id: fileId } })).data!,
  });
