import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { DataTable } from './data-table';

const columns = [{ name: 'region', dtype: 'object' }, { name: 'units', dtype: 'int64' }];
const rows = Array.from({ length: 25 }, (_, i) => [`r${i % 3}`, i + 1]);

const firstCells = () =>
  screen
    .getAllByRole('row')
    .slice(1)
    .map((r) => within(r).getAllByRole('cell')[1].textContent);

describe('DataTable', () => {
  it('shows column names with dtypes and pages through rows', () => {
    render(<DataTable columns={columns} rows={rows} rowCount={1000} />);
    expect(screen.getByText('int64')).toBeTruthy();
    expect(screen.getByTestId('page-indicator').textContent).toBe('Page 1 of 3');
    expect(firstCells()).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    expect(screen.getByTestId('page-indicator').textContent).toBe('Page 2 of 3');
    expect(firstCells()[0]).toBe('11');
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    expect(firstCells()).toEqual(['21', '22', '23', '24', '25']);
    expect((screen.getByRole('button', { name: 'Next page' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByText(/25 rows shown of 1,000/)).toBeTruthy();
  });

  it('sorts by a column, ascending then descending', () => {
    render(<DataTable columns={columns} rows={rows} />);
    const sort = screen.getByRole('button', { name: 'Sort by units' });
    fireEvent.click(sort);
    const first = firstCells()[0];
    fireEvent.click(sort);
    const second = firstCells()[0];
    expect([first, second].sort()).toEqual(['1', '25']);
  });
});
