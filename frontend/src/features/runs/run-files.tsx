import { History } from 'lucide-react';
import type { FileOut, RunFileOut } from '@/client';
import type { RunView } from './run-reducer';

export type ChangedFile = { name: string; from: number; to: number };

/**
 * Whether a run read a file: what the sandbox saw (`read`). A run without it (from a server that
 * did not say) falls back to the old guess: pinned to its question, or named in its steps' code.
 */
function wasRead(f: RunFileOut, pinned: string[], code: string): boolean {
  return f.read ?? (pinned.includes(f.file_id) || code.includes(f.name));
}

/**
 * The files a run read that have a newer version now; `files` are the versions its workspace had,
 * `current` the project's files.
 */
export function changedFiles(run: Pick<RunView, 'steps'>, files: RunFileOut[], current: FileOut[], pinned: string[] = []): ChangedFile[] {
  const code = run.steps.map((s) => s.code ?? '').join('\n');
  return files
    .filter((f) => wasRead(f, pinned, code))
    .flatMap((f) => {
      const now = current.find((c) => c.id === f.file_id);
      return now && now.version > f.version ? [{ name: f.name, from: f.version, to: now.version }] : [];
    });
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
