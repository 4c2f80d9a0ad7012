import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { StepView } from './run-reducer';
import { StepCard } from './step-card';
import { queryFigures, StepQueries } from './step-queries';

const total = { source: 'shop', sql: 'SELECT region, SUM(amount) AS total FROM orders GROUP BY region', rows: 1204, duration_ms: 38, error: null };
const refused = { source: 'shop', sql: 'DELETE FROM orders', rows: 0, duration_ms: 2, error: 'Only queries are allowed: DELETE changes the database.' };

describe('StepQueries', () => {
  it('shows each query with its source, SQL, rows and duration, or its error', () => {
    render(<StepQueries queries={[total, refused]} />);
    const items = screen.getAllByTestId('step-query');
    expect(items).toHaveLength(2);
    expect(screen.getByText('Queries (2)')).toBeTruthy();
    expect(within(items[0]).getByTestId('query-source').textContent).toBe('shop');
    expect(within(items[0]).getByTestId('query-sql').textContent).toBe(total.sql);
    expect(within(items[0]).getByTestId('query-figures').textContent).toBe('1,204 rows · 38 ms');
    expect(within(items[0]).queryByRole('alert')).toBeNull();
    expect(within(items[1]).getByRole('alert').textContent).toBe(refused.error);
    expect(within(items[1]).getByTestId('query-figures').textContent).toBe('failed · 2 ms');
    expect(within(items[1]).getByRole('button', { name: 'Copy query 2' })).toBeTruthy();
  });

  it('folds long SQL to its first lines, with Show all', () => {
    const sql = ['SELECT region,', '  SUM(amount) AS total,', '  COUNT(*) AS n,', '  AVG(amount) AS mean', 'FROM orders', 'GROUP BY region'].join('\n');
    render(<StepQueries queries={[{ ...total, sql }]} />);
    const pre = screen.getByTestId('query-sql');
    expect(pre.className).toContain('line-clamp-4');
    fireEvent.click(screen.getByRole('button', { name: 'Show all' }));
    expect(pre.className).not.toContain('line-clamp-4');
    expect(screen.getByRole('button', { name: 'Show less' }).getAttribute('aria-expanded')).toBe('true');
  });

  it('says nothing for a step that ran no query; one row in the singular', () => {
    const { container } = render(<StepQueries queries={[]} />);
    expect(container.textContent).toBe('');
    expect(queryFigures({ rows: 1, duration_ms: 1500 })).toBe('1 row · 1.5 s');
  });

  it('appears in the step card under the code', () => {
    const step: StepView = {
      index: 1,
      thought: '',
      code: 'df = sql("SELECT 1", source="shop")',
      output: 'done',
      error: null,
      durationMs: 50,
      tokensIn: 1,
      tokensOut: 1,
      finished: true,
      queries: [total],
    };
    render(<StepCard step={step} artifacts={[]} defaultOpen />);
    const code = screen.getByTestId('code');
    const queries = screen.getByTestId('step-queries');
    expect(code.compareDocumentPosition(queries) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(queries.compareDocumentPosition(screen.getByTestId('step-output')) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });
});
