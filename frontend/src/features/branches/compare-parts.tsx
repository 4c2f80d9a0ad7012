import { useQuery } from '@tanstack/react-query';
import { Minus, Plus } from 'lucide-react';
import type { ArtifactOut, RunOut } from '@/client';
import { formatCell } from '@/components/data-table';
import { ArtifactView } from '@/features/runs/artifact-view';
import { artifactTitle } from '@/features/runs/artifacts';
import { artifactJsonQuery } from '@/features/runs/queries';
import { UserQuery } from '@/features/runs/run-view';
import { cn } from '@/lib/utils';
import { diffNumbers, diffRows, pairTables, type Table } from './compare-diff';

/** An answer with each number that differs from the other side's corresponding answer marked. */
export function DiffAnswer({ text, other }: { text: string; other: string | null }) {
  const segments = other === null ? [{ text, number: false, changed: false }] : diffNumbers(text, other);
  return (
    <p className="text-sm leading-relaxed whitespace-pre-wrap" data-testid="compare-answer">
      {segments.map((s, i) =>
        s.changed ? (
          <mark
            key={i}
            className="rounded bg-amber-400/30 px-0.5 font-semibold text-foreground dark:bg-amber-400/25"
            title="Differs from the other side"
            data-testid="changed-number"
          >
            {s.text}
          </mark>
        ) : (
          <span key={i}>{s.text}</span>
        ),
      )}
    </p>
  );
}

const SHOWN = 50;

/** A table with the rows the other side's table lacks marked added, and the other side's rows it lacks listed as removed. */
export function DiffTable({ artifact, other }: { artifact: ArtifactOut; other: ArtifactOut | null }) {
  const mine = useQuery(artifactJsonQuery<Table>(artifact.url));
  const theirs = useQuery({ ...artifactJsonQuery<Table>(other?.url ?? ''), enabled: !!other });
  if (!mine.data) return <p className="p-3 text-sm text-muted-foreground">{mine.error ? `Could not load ${artifact.name}.` : 'Loading…'}</p>;
  const diff = theirs.data ? diffRows(mine.data, theirs.data) : null;
  const added = new Set(diff?.added ?? []);
  const names = mine.data.columns.map((c) => (typeof c === 'string' ? c : c.name));
  const rows = mine.data.rows.slice(0, SHOWN);
  return (
    <figure className="overflow-hidden rounded-xl border bg-card" data-testid="compare-table" data-name={artifact.name}>
      <figcaption className="flex flex-wrap items-center gap-x-2 border-b bg-muted/40 px-3 py-1 text-xs text-muted-foreground">
        <span className="min-w-0 flex-1 truncate font-medium text-foreground">{artifactTitle(artifact)}</span>
        {diff ? (
          <span data-testid="compare-table-summary">
            {diff.added.length || diff.removed.length
              ? `${diff.added.length} row${diff.added.length === 1 ? '' : 's'} added, ${diff.removed.length} removed`
              : 'same rows'}
          </span>
        ) : (
          !other && <span>no table to compare with</span>
        )}
      </figcaption>
      <div className="max-h-96 overflow-auto">
        <table className="w-full text-xs tabular-nums">
          <thead className="sticky top-0 bg-card">
            <tr>
              <th className="w-5" />
              {names.map((n) => (
                <th key={n} className="px-2 py-1 text-left font-medium whitespace-nowrap">
                  {n}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, i) => (
              <tr
                key={i}
                className={cn('border-t', added.has(i) && 'bg-emerald-500/10')}
                data-testid={added.has(i) ? 'row-added' : undefined}
                title={added.has(i) ? 'Not in the other side’s table' : undefined}
              >
                <td className="pl-1 text-emerald-700 dark:text-emerald-400">{added.has(i) && <Plus className="size-3" aria-label="added" />}</td>
                {row.map((v, j) => (
                  <td key={j} className="px-2 py-1 whitespace-nowrap">
                    {formatCell(v)}
                  </td>
                ))}
              </tr>
            ))}
            {diff?.removed.slice(0, SHOWN).map((row, i) => (
              <tr key={`removed-${i}`} className="border-t bg-destructive/5 text-muted-foreground line-through" data-testid="row-removed" title="Only in the other side’s table">
                <td className="pl-1 text-destructive">
                  <Minus className="size-3" aria-label="removed" />
                </td>
                {row.map((v, j) => (
                  <td key={j} className="px-2 py-1 whitespace-nowrap">
                    {formatCell(v)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {mine.data.rows.length > SHOWN && (
        <p className="border-t px-3 py-1 text-xs text-muted-foreground">
          The first {SHOWN} of {mine.data.rows.length} rows shown.
        </p>
      )}
    </figure>
  );
}

/** One side's question in the comparison: the question, its answer (numbers that differ marked), its charts and tables. */
export function CompareRun({ run, other }: { run: RunOut | null; other: RunOut | null }) {
  if (!run) return <p className="rounded-lg border border-dashed p-3 text-sm text-muted-foreground">No question here on this side.</p>;
  const shown = run.artifacts.filter((a) => a.kind === 'plotly' || a.kind === 'image');
  const tables = run.artifacts.filter((a) => a.kind === 'table');
  const otherTables = pairTables(tables, other?.artifacts.filter((a) => a.kind === 'table') ?? []);
  return (
    <div className="min-w-0 space-y-3" data-testid="compare-run" data-run-id={run.id}>
      <UserQuery text={run.query} />
      {run.final_answer ? (
        <DiffAnswer text={run.final_answer} other={other?.final_answer ?? null} />
      ) : (
        <p className="text-sm text-muted-foreground">{run.error ?? `No answer (${run.status}).`}</p>
      )}
      {shown.map((a) => (
        <ArtifactView key={a.id} artifact={a} />
      ))}
      {tables.map((a, i) => (
        <DiffTable key={a.id} artifact={a} other={otherTables[i]} />
      ))}
    </div>
  );
}
