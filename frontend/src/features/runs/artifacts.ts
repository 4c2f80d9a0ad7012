import type { StreamArtifact } from './events';

/** A result card: an artifact, and for a table the CSV file with all its rows (written alongside). */
export type ResultItem = { artifact: StreamArtifact; csv: StreamArtifact | null };

const RESULT_KINDS = new Set(['plotly', 'image', 'table']);

/** The title of an artifact's card: a chart's or table's name without its .json/.png/.svg extension. */
export function artifactTitle(a: Pick<StreamArtifact, 'kind' | 'name'>): string {
  if (!RESULT_KINDS.has(a.kind)) return a.name;
  return a.name.replace(/\.(json|png|svg|jpe?g)$/i, '') || a.name;
}

const csvNameOf = (table: StreamArtifact) => table.name.replace(/\.json$/i, '') + '.csv';

/**
 * Folds each table's CSV file (`display(df)` writes `table-N.json` and `table-N.csv` in the same
 * step) into the table's card, so the data shows once, with both downloads.
 */
export function groupArtifacts(artifacts: StreamArtifact[]): ResultItem[] {
  const csvOf = new Map<string, StreamArtifact>();
  for (const t of artifacts) {
    if (t.kind !== 'table') continue;
    const csv = artifacts.find((f) => f.kind === 'file' && f.step === t.step && f.name === csvNameOf(t));
    if (csv) csvOf.set(t.id, csv);
  }
  const folded = new Set([...csvOf.values()].map((c) => c.id));
  return artifacts.filter((a) => !folded.has(a.id)).map((a) => ({ artifact: a, csv: csvOf.get(a.id) ?? null }));
}

const KIND_ORDER: Record<string, number> = { plotly: 0, image: 1, table: 2 };

/**
 * Every result of a run, as shown under its answer: charts first (figures, then images), then
 * tables, then the other files the code wrote; within a kind, in the order they were made.
 */
export function answerResults(items: ResultItem[]): ResultItem[] {
  const rank = (i: ResultItem) => KIND_ORDER[i.artifact.kind] ?? 3;
  return items.map((item, n) => ({ item, n })).sort((a, b) => rank(a.item) - rank(b.item) || a.n - b.n).map((x) => x.item);
}
