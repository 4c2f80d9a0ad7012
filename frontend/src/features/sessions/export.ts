import { useMutation } from '@tanstack/react-query';
import type { RunOut } from '@/client';
import { downloadAttachment } from '@/lib/api';

/** What `GET /sessions/{id}/export?format=` can make of a session. */
export const EXPORT_FORMATS = [
  { format: 'ipynb', label: 'Export as notebook (.ipynb)', short: 'Notebook', extension: '.ipynb' },
  { format: 'html', label: 'Export as report (.html)', short: 'Report', extension: '.html' },
  { format: 'md', label: 'Export as Markdown (.md)', short: 'Markdown', extension: '.md' },
] as const;

export type ExportFormat = (typeof EXPORT_FORMATS)[number]['format'];

/** The name to save under when the server names no file: the session's title, made safe for a file name. */
export function fallbackExportName(title: string | null | undefined, format: ExportFormat): string {
  const base = (title ?? '').replace(/[\\/:*?"<>|\u0000-\u001f…]+/g, ' ').replace(/\s+/g, ' ').trim() || 'session';
  return `${base}.${format}`;
}

/** The runs an export starts with when the user chooses: those that succeeded (all of them when none did). */
export function defaultExportRuns(runs: Pick<RunOut, 'id' | 'status'>[]): string[] {
  const succeeded = runs.filter((r) => r.status === 'succeeded');
  return (succeeded.length ? succeeded : runs).map((r) => r.id);
}

/** The export's URL: `runs` (in any order; the server keeps the session's) only when chosen. */
export function exportUrl(sessionId: string, format: ExportFormat, runs?: string[]): string {
  const query = new URLSearchParams({ format });
  if (runs) query.set('runs', runs.join(','));
  return `/api/v1/sessions/${encodeURIComponent(sessionId)}/export?${query}`;
}

/**
 * Downloads the session as a notebook, a report or Markdown, under the server's file name: the
 * runs given, or the format's default (the report: the runs that succeeded; the others: every run).
 * Errors are left to the caller to show (the menu shows the server's sentence), not toasted.
 */
export function useExportSession() {
  return useMutation({
    mutationFn: ({ sessionId, title, format, runs }: { sessionId: string; title?: string | null; format: ExportFormat; runs?: string[] }) =>
      downloadAttachment(exportUrl(sessionId, format, runs), fallbackExportName(title, format)),
    meta: { silent: true },
  });
}
