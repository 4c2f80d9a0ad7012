import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { SessionOut } from '@/client';
import { DeleteSessionDialog, subtreeOf } from './delete-dialog';

const s = (id: string, parent: string | null = null) => ({ id, title: id, project_id: 'p', parent_session_id: parent }) as SessionOut;

describe('subtreeOf', () => {
  it('lists the session and every branch below it, at any depth', () => {
    const sessions = [s('root'), s('a', 'root'), s('b', 'root'), s('a1', 'a'), s('other')];
    expect(subtreeOf('root', sessions)).toEqual(['root', 'a', 'b', 'a1']);
    expect(subtreeOf('a', sessions)).toEqual(['a', 'a1']);
  });
});

describe('DeleteSessionDialog', () => {
  const show = (branches: number) =>
    render(
      <QueryClientProvider client={new QueryClient()}>
        <DeleteSessionDialog session={s('What if x')} branches={branches} onClose={() => undefined} onDeleted={() => undefined} />
      </QueryClientProvider>,
    );

  it('asks what becomes of the branches of a session that has some', () => {
    show(2);
    expect(screen.getByTestId('delete-session-dialog').textContent).toContain('It has 2 branches');
    expect(screen.getByRole('button', { name: 'Keep its 2 branches as separate sessions' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Delete them too' })).toBeTruthy();
  });

  it('asks the plain question of a session without branches', () => {
    show(0);
    expect(screen.getByRole('button', { name: 'Delete' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Delete them too' })).toBeNull();
  });
});
