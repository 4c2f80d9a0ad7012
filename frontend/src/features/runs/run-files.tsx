import { History } from 'lucide-react';
import type { FileOut, RunFileOut, RunOut } from '@/client';
import type { RunView } from './run-reducer';

export type ChangedFile = { name: string; from: number; to: number };

/**
 * The files a run used that have a newer version now: used means pinned to its question or named
 * in its steps' code; `files` are the versions its workspace had, `current` the project's files.
 */
export function changedFiles(run: Pick<RunView, 'steps'>, files: RunFileOut[], current: FileOut[], pinned: string[] = []): ChangedFile[] {
  const code = run.steps.map((s) => s.code ?? '').join('\n');
  return files
    .filter((f) => pinned.includes(f.file_id) || code.includes(f.name))
    .flatMap((f) => {
      const now = current.find((c) => c.id === f.file_id);
      return now && now.version > f.version ? [{ name: f.name, from: f.version, to: now.version }] : [];
    });
}

/**
 * The files a stored run used, at the version its workspace had: the files pinned to its question
 * and those its steps' code names (the workspace holds every project file; these are the ones read).
 */
export function usedFiles(run: Pick<RunOut, 'steps' | 'files' | 'file_ids'>): RunFileOut[] {
  const code = run.steps.map((s) => s.code ?? '').join('\n');
  const pinned = run.file_ids ?? [];
  return (run.files ?? []).filter((f) => pinned.includes(f.file_id) || code.includes(f.name));
}

/** Said calmly under an answer: the data it was computed from has been replaced since. */
export function ChangedFilesNote({ changed }: { changed: ChangedFile[] }) {
  if (!changed.length) return null;
  return (
    <ul className="space-y-1 text-xs text-muted-foreground" data-testid="files-changed">
      {changed.map((c) => (
        <li key={c.name} className="flex items-center gap-1.5">
          <History className="size-3.5 shrink-0" />
          <span>
            <span className="font-medium text-foreground">{c.name}</span> changed since this answer (v{c.from} → v{c.to})
          </span>
        </li>
      ))}
    </ul>
  );
}
