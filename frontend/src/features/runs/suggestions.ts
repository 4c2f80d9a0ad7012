import type { ColumnProfile, FileProfile } from '@/client';

/** How many questions an empty session offers. */
export const MAX_SUGGESTIONS = 4;

type Kind = 'number' | 'date' | 'text' | 'yes/no';

const kindOf = (c: ColumnProfile): Kind =>
  c.type ?? (c.kind === 'datetime' ? 'date' : c.kind === 'boolean' ? 'yes/no' : c.kind === 'number' ? 'number' : 'text');

// An identifier is no quantity to total: "id", "customer_id", "order no".
const ID = /(^|[_\s-])(id|no|nr|number|code|key)$|^id[_\s-]|^#$/i;

/**
 * Questions an analyst might ask first of the project's files, written from their columns' types:
 * a total of a number by a category, how a number changes over a date, how two numbers relate. Each
 * names its file when there is more than one. At most MAX_SUGGESTIONS, every file asked about once
 * before any is asked about twice; a file with no such columns is asked about as a whole, last.
 */
export function suggestQuestions(profiles: { name: string; profile: FileProfile }[]): string[] {
  const several = profiles.length > 1;
  const perFile = profiles.map(({ name, profile }) => {
    const cols = profile.columns;
    const numbers = cols.filter((c) => kindOf(c) === 'number' && !ID.test(c.name.trim()) && c.distinct > 1);
    // A category to group by: text with a few values, not one per row.
    const categories = cols
      .filter((c) => kindOf(c) === 'text' && c.distinct > 1 && c.distinct <= Math.max(50, profile.rows_profiled / 20))
      .sort((a, b) => a.distinct - b.distinct);
    const dates = cols.filter((c) => kindOf(c) === 'date');
    const where = several ? ` in ${name}` : '';
    const qs: string[] = [];
    const [n1, n2] = numbers;
    if (n1 && categories[0]) qs.push(`What is the total ${n1.name} by ${categories[0].name}${where}?`);
    if (n1 && dates[0]) qs.push(`How does ${n1.name} change over ${dates[0].name}${where}? Chart it.`);
    if (n1 && n2) qs.push(`How are ${n1.name} and ${n2.name} related${where}?`);
    if (n2 && categories[0]) qs.push(`Which ${categories[0].name} has the highest average ${n2.name}${where}?`);
    return qs;
  });
  const out: string[] = [];
  for (let round = 0; out.length < MAX_SUGGESTIONS && perFile.some((qs) => qs.length > round); round++) {
    for (const qs of perFile) if (qs[round] && out.length < MAX_SUGGESTIONS) out.push(qs[round]);
  }
  // A file whose columns suggest nothing is asked about as a whole, after the questions that are.
  profiles.forEach(({ name }, i) => {
    if (!perFile[i].length && out.length < MAX_SUGGESTIONS) out.push(`What is in ${name}? Summarise its columns.`);
  });
  return out;
}
