import { useMutation, useQueryClient } from '@tanstack/react-query';
import { FileClock, RefreshCw } from 'lucide-react';
import type { SessionOut } from '@/client';
import { sessionKeys } from '@/features/sessions/queries';
import { moveToLatestFiles } from './api';

type Pin = NonNullable<SessionOut['file_pins']>[number];

/** The pins worth saying: a file read at an older version than the latest, or a version no longer kept. */
export function pinsBehind(pins: SessionOut['file_pins']): Pin[] {
  return (pins ?? []).filter((p) => !p.kept || p.version !== p.latest_version);
}

/**
 * A branch reads the file versions its past read: "Reads orders.csv as version 2 (latest is 3)",
 * with "Use latest files" to move it to today's files (its past stays as it was).
 */
export function FilePinsNote({ session, canEdit = true }: { session: SessionOut; canEdit?: boolean }) {
  const qc = useQueryClient();
  const behind = pinsBehind(session.file_pins);
  const move = useMutation({
    mutationFn: () => moveToLatestFiles(session.id),
    onSuccess: (moved) => qc.setQueryData<SessionOut>(sessionKeys.detail(session.id), (s) => (s ? { ...s, ...moved, file_pins: [] } : s)),
  });
  if (!behind.length) return null;
  return (
    <div className="mt-2 flex flex-wrap items-start gap-2 rounded-md bg-background/60 px-3 py-2 text-xs" data-testid="branch-file-pins">
      <FileClock className="mt-px size-3.5 shrink-0 text-primary" />
      <ul className="min-w-0 flex-1 space-y-0.5">
        {behind.map((p) => (
          <li key={p.file_id} data-testid="branch-file-pin" data-kept={p.kept}>
            {p.note}
          </li>
        ))}
      </ul>
      {canEdit && (
        <button
          type="button"
          className="inline-flex items-center gap-1 rounded-md px-2 py-0.5 font-medium text-primary hover:bg-primary/10 disabled:opacity-50"
          onClick={() => move.mutate()}
          disabled={move.isPending}
          title="The branch's next questions read the latest version of every file; its past stays as it was"
          data-testid="branch-use-latest-files"
        >
          <RefreshCw className="size-3.5" /> Use latest files
        </button>
      )}
    </div>
  );
}
