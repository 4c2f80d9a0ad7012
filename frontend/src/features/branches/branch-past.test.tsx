import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { RunOut } from '@/client';
import { RestoredNote } from './branch-past';

const run = (steps: { code: string | null; error: string | null }[]) => ({ steps }) as unknown as RunOut;

describe('RestoredNote', () => {
  it('names the question whose snapshot the variables came from, with the notes', () => {
    render(<RestoredNote restored={{ from: 'snapshot', notes: ['model (a fitted LinearRegression) could not be kept'] }} at="Set x to 10" past={[]} />);
    const note = screen.getByTestId('branch-restored');
    expect(note.textContent).toContain('Variables restored from the snapshot at “Set x to 10”.');
    expect(note.textContent).toContain('model (a fitted LinearRegression) could not be kept');
  });

  it('counts the replayed steps (code that ran without an error) and says what the server noted', () => {
    const past = [
      run([
        { code: 'x = 1', error: null },
        { code: 'oops', error: 'NameError' },
      ]),
      run([{ code: 'x += 1', error: null }]),
    ];
    render(<RestoredNote restored={{ from: 'replay', notes: ['A query on a live database re-ran against today’s data.'] }} at={null} past={past} />);
    const note = screen.getByTestId('branch-restored');
    expect(note.textContent).toContain('Rebuilt by replaying 2 steps');
    expect(note.textContent).toContain('re-ran against today’s data');
  });

  it('says nothing before the first run has restored anything', () => {
    const { container } = render(<RestoredNote restored={null} at="q" past={[]} />);
    expect(container.textContent).toBe('');
  });
});
