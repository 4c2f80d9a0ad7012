import { useQueries, useQuery } from '@tanstack/react-query';
import { FileSpreadsheet, FileText, Lightbulb, Pin, Sparkles, Upload } from 'lucide-react';
import type { FileOut } from '@/client';
import { filesQuery, profileQuery } from '@/features/files/queries';
import { cn, formatBytes } from '@/lib/utils';
import { MAX_SUGGESTIONS, suggestQuestions } from './suggestions';

/** How many files' profiles suggest questions: tabular ones the check read. */
const PROFILED_FILES = 3;
const tabular = (f: FileOut) => !f.check || f.check === 'ok';

/**
 * What an empty session shows: questions written from the files' columns (a click puts one in the
 * question box), the datasets the agent can read (the pinned ones marked, a pin to point the question
 * at one), what pinning means, and that a file dropped here joins the project.
 */
export function SessionStart({
  projectId,
  pinned,
  onPin,
  onSuggest,
  uploading,
  readOnly = false,
}: {
  projectId: string;
  pinned: string[];
  onPin: (fileId: string) => void;
  onSuggest: (question: string) => void;
  /** Files dropped on the chat, on their way to the project. */
  uploading: string[];
  /** A viewer's: no questions to suggest, nothing to pin or drop. */
  readOnly?: boolean;
}) {
  const files = useQuery(filesQuery(projectId));
  const items = files.data?.items ?? [];
  // Questions about the files pinned, else the freshest ones.
  const profiled = items
    .filter(tabular)
    .sort((a, b) => Number(pinned.includes(b.id)) - Number(pinned.includes(a.id)) || b.updated_at.localeCompare(a.updated_at))
    .slice(0, PROFILED_FILES);
  const profiles = useQueries({ queries: profiled.map((f) => ({ ...profileQuery(f.id, f.sha256), meta: { silent: true } })) });
  const ready = profiled.flatMap((f, i) => (profiles[i]?.data ? [{ name: f.name, profile: profiles[i].data }] : []));
  const suggestions = profiles.every((p) => !p.isLoading) ? suggestQuestions(ready).slice(0, MAX_SUGGESTIONS) : [];
  if (readOnly)
    return (
      <div className="mx-auto flex max-w-xl flex-col items-center gap-2 py-8 text-center text-muted-foreground" data-testid="session-start">
        <Sparkles className="size-6 text-primary" />
        <p className="text-base font-medium text-foreground">No questions here yet</p>
        <p className="max-w-sm text-sm">When an editor asks one, it shows here as it is answered.</p>
      </div>
    );

  return (
    <div className="mx-auto flex max-w-xl flex-col gap-6 py-8" data-testid="session-start">
      <div className="flex flex-col items-center gap-2 text-center text-muted-foreground">
        <Sparkles className="size-6 text-primary" />
        <p className="text-base font-medium text-foreground">What would you like to know?</p>
        <p className="max-w-sm text-sm">
          Ask in plain words — the assistant writes and runs Python against this project's datasets and shows its work.
        </p>
      </div>

      {suggestions.length > 0 && (
        <section aria-labelledby="start-suggestions" className="space-y-2">
          <h2 id="start-suggestions" className="text-xs font-medium tracking-wide text-muted-foreground uppercase">
            Try asking
          </h2>
          <ul className="grid gap-2 sm:grid-cols-2" data-testid="suggestions">
            {suggestions.map((q) => (
              <li key={q}>
                <button
                  type="button"
                  className="flex h-full w-full cursor-pointer items-start gap-2 rounded-lg border bg-card px-3 py-2 text-left text-sm hover:border-primary/50 hover:bg-muted/40"
                  onClick={() => onSuggest(q)}
                >
                  <Lightbulb className="mt-0.5 size-4 shrink-0 text-primary" />
                  {q}
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="start-datasets" className="space-y-2">
        <h2 id="start-datasets" className="text-xs font-medium tracking-wide text-muted-foreground uppercase">
          Datasets the agent can read
        </h2>
        {files.data && items.length === 0 && uploading.length === 0 && (
          <p className="rounded-lg border border-dashed px-3 py-4 text-center text-sm text-muted-foreground">
            This project has no datasets yet. Drop a file here to add one.
          </p>
        )}
        {items.length > 0 && (
          <ul className="max-h-72 divide-y overflow-y-auto rounded-lg border bg-card text-sm" data-testid="start-datasets">
            {items.map((f) => {
              const on = pinned.includes(f.id);
              const Icon = tabular(f) ? FileSpreadsheet : FileText;
              return (
                <li key={f.id} className="flex items-center gap-2 px-3 py-1.5" data-file={f.name} data-pinned={on}>
                  <Icon className="size-4 shrink-0 text-muted-foreground" />
                  <span className="min-w-0 flex-1 truncate">{f.name}</span>
                  <span className="shrink-0 text-xs text-muted-foreground tabular-nums">{formatBytes(f.size)}</span>
                  <button
                    type="button"
                    aria-pressed={on}
                    aria-label={on ? `Unpin ${f.name}` : `Pin ${f.name}`}
                    onClick={() => onPin(f.id)}
                    className={cn(
                      'flex shrink-0 cursor-pointer items-center gap-1 rounded-full border px-2 py-0.5 text-xs',
                      on ? 'border-primary bg-primary/10 text-primary' : 'text-muted-foreground hover:bg-muted',
                    )}
                  >
                    <Pin className="size-3" /> {on ? 'Pinned' : 'Pin'}
                  </button>
                </li>
              );
            })}
          </ul>
        )}
        {uploading.map((name) => (
          <p key={name} className="flex items-center gap-2 text-sm text-muted-foreground" role="status">
            <Upload className="size-4 animate-pulse" /> Adding {name} to the project…
          </p>
        ))}
        <p className="text-xs text-muted-foreground" data-testid="pin-explained">
          The agent can read every file here; pinning files (here or with “Pin files” under the question box) tells it which ones your question is about.
          Drop a file on the chat to add it.
        </p>
      </section>

    </div>
  );
}
