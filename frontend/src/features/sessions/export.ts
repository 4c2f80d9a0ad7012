import { useMutation } from '@tanstack/react-query';
import { downloadAttachment } from '@/lib/api';

/** What `GET /sessions/{id}/export?format=` can make of a session. */
export const EXPORT_FORMATS = [
  { format: 'ipynb', label: 'Export as notebook (.ipynb)' },
  { format: 'html', label: 'Export as report (.html)' },
  { format: 'md', label: 'Export as Markdown (.md)' },
] as const;

export type ExportFormat = (typeof EXPORT_FORMATS)[number]['format'];

/** The name to save under when the server names no file: the session's title, made safe for a file name. */
export function fallbackExportName(title: string | null | undefined, format: ExportFormat): string {
  const base = (title ?? '').replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ').replace(/\s+/g, ' ').trim() || 'session';
  return `${base}.${format}`;
}

/**
 * Downloads the session as a notebook, a report or Markdown, under the server's file name.
 * Errors are left to the caller to show (the menu shows the server's sentence), not toasted.
 */
export function useExportSession() {
  return useMutation({
    mutationFn: ({ sessionId, title, format }: { sessionId: string; title?: string | null; format: ExportFormat }) =>
      downloadAttachment(
        `/api/v1/sessions/${encodeURIComponent(sessionId)}/export?format=${format}`,
        fallbackExportName(title, format),
      ),
    meta: { silent: true },
  });
}
