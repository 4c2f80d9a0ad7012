import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { DataTable, formatCell } from './data-table';

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

describe('formatCell', () => {
  it('keeps integers exact with separators and rounds other numbers sensibly', () => {
    expect(formatCell(28597)).toBe('28,597');
    expect(formatCell(9007199254740993n.toString())).toBe('9007199254740993');
    expect(formatCell(28597.5)).toBe('28,597.5');
    expect(formatCell(3.14159265)).toBe('3.1416');
    expect(formatCell(0.000123456)).toBe('0.0001235');
    expect(formatCell(-0.5)).toBe('-0.5');
    expect(formatCell(null)).toBe('');
    expect(formatCell('r1')).toBe('r1');
  });

  it('shows the full value of a rounded number as its tooltip', () => {
    render(<DataTable columns={[{ name: 'x' }]} rows={[[1 / 3]]} />);
    const cell = screen.getByText('0.3333');
    expect(cell.getAttribute('title')).toBe(String(1 / 3));
  });
});
