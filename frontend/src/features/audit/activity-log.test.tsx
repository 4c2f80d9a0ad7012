import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { listAuditEvents, type AuditEventOut } from '@/client';
import { useAuthStore } from '@/features/auth/auth-store';
import { ApiError } from '@/lib/api';
import { ActivityLog } from './activity-log';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  listAuditEvents: vi.fn(),
}));
const list = vi.mocked(listAuditEvents);

const event = (over: Partial<AuditEventOut>): AuditEventOut => ({
  id: 'e',
  at: '2026-03-01T10:00:00Z',
  actor: { user_id: 'ana', email: 'ana@example.com' },
  action: 'member.added',
  subject_type: 'member',
  subject_id: 'bob',
  summary: 'ana@example.com added bob@example.com as editor',
  detail: { role: 'editor' },
  ...over,
});

function show() {
  useAuthStore.setState({ auth: { token: 't', expiresAt: '2099-01-01T00:00:00Z', user: { id: 'ana' } as never } });
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <ActivityLog projectId="p1" />
    </QueryClientProvider>,
  );
}

beforeEach(() => {
  list.mockReset();
});

describe('ActivityLog', () => {
  it('lists who did what and when, newest first, with the particulars folded', async () => {
    list.mockResolvedValue({
      data: {
        items: [
          event({
            id: 'e2',
            at: '2026-03-01T11:00:00Z',
            actor: { user_id: 'bob', email: 'bob@example.com' },
            action: 'run.asked',
            summary: 'bob@example.com asked “Which region sells the most?” (openai/scripted)',
            detail: { run_id: 'r1', model: 'openai/scripted', tokens_in: 12345 },
          }),
          event({ id: 'e1' }),
          event({ id: 'e0', actor: null, action: 'project.created', summary: 'The project was created', detail: {} }),
        ],
        total: 3,
      },
    } as never);
    show();
    const rows = await screen.findAllByTestId('activity-row');
    expect(list).toHaveBeenCalledWith({ path: { project_id: 'p1' }, query: { limit: 50, offset: 0 } });
    expect(rows.map((r) => r.dataset.action)).toEqual(['run.asked', 'member.added', 'project.created']);
    expect(rows[0].textContent).toContain('bob@example.com');
    expect(within(rows[0]).getByTestId('activity-summary').textContent).toBe('bob@example.com asked “Which region sells the most?” (openai/scripted)');
    expect(within(rows[0]).getByText('12,345')).toBeTruthy();
    expect(rows[0].querySelector('time')!.getAttribute('dateTime')).toBe('2026-03-01T11:00:00Z');
    // One's own doing says "You"; the workbench's own has no member.
    expect(within(rows[1]).getByText('You')).toBeTruthy();
    expect(within(rows[2]).getByText('Workbench')).toBeTruthy();
    expect(screen.getByTestId('activity-total').textContent).toBe('3 events');
  });

  it('filters by action and pages back in time', async () => {
    const page = (offset: number, total: number) => ({
      data: { items: Array.from({ length: Math.min(50, total - offset) }, (_, i) => event({ id: `e${offset + i}` })), total },
    });
    list.mockImplementation((async (options: { query: { offset: number } }) => page(options.query.offset, 120)) as never);
    show();
    await screen.findAllByTestId('activity-row');
    expect(screen.getByTestId('activity-page').textContent).toBe('Page 1 of 3');
    fireEvent.click(screen.getByRole('button', { name: /Older/ }));
    await waitFor(() => expect(screen.getByTestId('activity-page').textContent).toBe('Page 2 of 3'));
    expect(list).toHaveBeenLastCalledWith({ path: { project_id: 'p1' }, query: { limit: 50, offset: 50 } });

    fireEvent.change(screen.getByLabelText('Show'), { target: { value: 'share.revoked' } });
    await waitFor(() => expect(list).toHaveBeenLastCalledWith({ path: { project_id: 'p1' }, query: { limit: 50, offset: 0, action: 'share.revoked' } }));
  });

  it("says why when the server refuses (not an owner)", async () => {
    list.mockRejectedValue(new ApiError(403, 'You are an editor of this project: an owner can do this. Ask one of its owners for that role.', 'forbidden_role'));
    show();
    expect((await screen.findByRole('alert')).textContent).toContain('You are an editor of this project');
  });
});
