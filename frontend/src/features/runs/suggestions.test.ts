import { describe, expect, it } from 'vitest';
import type { ColumnProfile, FileProfile } from '@/client';
import { suggestQuestions } from './suggestions';

const col = (name: string, type: ColumnProfile['type'], distinct: number): ColumnProfile => ({
  name,
  dtype: 'x',
  kind: type === 'number' ? 'number' : type === 'date' ? 'datetime' : type === 'yes/no' ? 'boolean' : 'text',
  type,
  missing: 0,
  distinct,
});
const profile = (columns: ColumnProfile[]): FileProfile => ({ row_count: 240, rows_profiled: 240, complete: true, columns });

describe('suggestQuestions', () => {
  it('asks for a total by a category, a change over a date and a relation, from the columns', () => {
    const sales = profile([col('order_id', 'number', 240), col('region', 'text', 4), col('day', 'date', 60), col('units', 'number', 30), col('price', 'number', 30)]);
    expect(suggestQuestions([{ name: 'sales.csv', profile: sales }])).toEqual([
      'What is the total units by region?',
      'How does units change over day? Chart it.',
      'How are units and price related?',
      'Which region has the highest average price?',
    ]);
  });

  it('names the file, asks about each file before asking twice about one, and about a file as a whole last', () => {
    const a = profile([col('region', 'text', 4), col('revenue', 'number', 100), col('cost', 'number', 90)]);
    const b = profile([col('note', 'text', 240)]);
    const c = profile([col('city', 'text', 3), col('day', 'date', 30), col('visits', 'number', 40)]);
    expect(suggestQuestions([{ name: 'a.csv', profile: a }, { name: 'notes.csv', profile: b }, { name: 'visits.csv', profile: c }])).toEqual([
      'What is the total revenue by region in a.csv?',
      'What is the total visits by city in visits.csv?',
      'How are revenue and cost related in a.csv?',
      'How does visits change over day in visits.csv? Chart it.',
    ]);
    expect(suggestQuestions([{ name: 'a.csv', profile: a }, { name: 'notes.csv', profile: b }])).toEqual([
      'What is the total revenue by region in a.csv?',
      'How are revenue and cost related in a.csv?',
      'Which region has the highest average cost in a.csv?',
      'What is in notes.csv? Summarise its columns.',
    ]);
  });
});
