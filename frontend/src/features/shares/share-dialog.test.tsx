import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createShare, listRuns, listShares, reissueShare, revokeShare, type SessionOut, type ShareOut } from '@/client';
import { useAuthStore } from '@/features/auth/auth-store';
import { ProjectRoleProvider } from '@/features/projects/role';
import { ApiError } from '@/lib/api';
import { storedRun } from '@/test/runs';
import { ShareDialog, shareState } from './share-dialog';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  createShare: vi.fn(),
  listRuns: vi.fn(),
  listShares: vi.fn(),
  reissueShare: vi.fn(),
  revokeShare: vi.fn(),
}));
const reissue = vi.mocked(reissueShare);
const create = vi.mocked(createShare);
const list = vi.mocked(listShares);
const revoke = vi.mocked(revokeShare);

const session = { id: 's1', project_id: 'p1', title: 'Revenue' } as SessionOut;
const URL_ONCE = 'http://wb.example/api/v1/shared/tok-abc';

const share = (over: Partial<ShareOut>): ShareOut => ({
  id: 'sh1',
  session_id: 's1',
  runs: ['r1'],
  created_at: '2026-03-01T10:00:00Z',
  created_by: { user_id: 'ana', email: 'ana@example.com' },
  expires_at: '2026-03-31T10:00:00Z',
  revoked_at: null,
  active: true,
  status: 'active',
  ...over,
});

function show(shares: ShareOut[] = [], role: 'viewer' | 'editor' | 'owner' = 'editor') {
  useAuthStore.setState({ auth: { token: 't', expiresAt: '2099-01-01T00:00:00Z', user: { id: 'bob' } as never } });
  vi.mocked(listRuns).mockResolvedValue({
    data: {
      items: [
        storedRun({ id: 'r1', query: 'Revenue by region?', status: 'succeeded' }),
        storedRun({ id: 'r2', query: 'Why did it fail?', status: 'failed' }),
        storedRun({ id: 'r3', query: 'And by month?', status: 'succeeded' }),
      ],
      total: 3,
    },
  } as never);
  list.mockResolvedValue({ data: { items: shares, total: shares.length } } as never);
  const onOpenChange = vi.fn();
  const result = render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <ProjectRoleProvider value={role}>
        <ShareDialog session={session} open onOpenChange={onOpenChange} />
      </ProjectRoleProvider>
    </QueryClientProvider>,
  );
  return { ...result, onOpenChange };
}

beforeEach(() => {
  create.mockReset();
  list.mockReset();
  revoke.mockReset();
});

describe('shareState', () => {
  it('tells an active link from a revoked and an expired one', () => {
    expect(shareState({ active: true, revoked_at: null, status: 'active' }).label).toBe('Active');
    expect(shareState({ active: false, revoked_at: '2026-03-02T00:00:00Z', status: 'revoked' }).label).toBe('Revoked');
    expect(shareState({ active: false, revoked_at: null, status: 'expired' }).label).toBe('Expired');
    expect(shareState({ active: false, revoked_at: null, status: 'author_lost_access' }).label).toBe('Author lost access');
  });
});

describe('ShareDialog', () => {
  it('makes a link of the answered questions for the days chosen, and shows it once with Copy', async () => {
    create.mockResolvedValue({ data: { id: 'sh2', url: URL_ONCE, token: 'tok-abc', expires_at: '2026-05-30T10:00:00Z' } } as never);
    const writeText = vi.fn(async () => undefined);
    Object.assign(navigator, { clipboard: { writeText } });
    const { rerender } = show();
    const runs = await screen.findByTestId('share-runs');
    // The answered questions are chosen to start with; the failed one is not.
    expect(within(runs).getAllByRole('checkbox').map((c) => (c as HTMLInputElement).checked)).toEqual([true, false, true]);
    fireEvent.click(screen.getByRole('radio', { name: '90 days' }));
    fireEvent.click(within(runs).getAllByRole('checkbox')[2]);
    fireEvent.click(screen.getByRole('button', { name: 'Create link' }));
    const made = await screen.findByTestId('share-made');
    expect(create).toHaveBeenCalledWith({ path: { session_id: 's1' }, body: { expires_in_days: 90, runs: ['r1'] } });
    expect((within(made).getByLabelText('The link') as HTMLInputElement).value).toBe(URL_ONCE);
    expect(made.textContent).toContain('This link will not be shown again');
    fireEvent.click(within(made).getByRole('button', { name: 'Copy' }));
    await within(made).findByRole('button', { name: 'Copied' });
    expect(writeText).toHaveBeenCalledWith(URL_ONCE);
    // The list is read again: the new link shows there, without its URL.
    await waitFor(() => expect(list).toHaveBeenCalledTimes(2));

    // Closed and opened again, the link is gone for good.
    rerender(
      <QueryClientProvider client={new QueryClient()}>
        <ShareDialog session={session} open={false} onOpenChange={() => undefined} />
      </QueryClientProvider>,
    );
    rerender(
      <QueryClientProvider client={new QueryClient()}>
        <ShareDialog session={session} open onOpenChange={() => undefined} />
      </QueryClientProvider>,
    );
    expect(screen.queryByText(URL_ONCE)).toBeNull();
    expect(screen.queryByTestId('share-made')).toBeNull();
  });

  it("shows the server's sentence when a link cannot be made", async () => {
    create.mockRejectedValue(new ApiError(403, 'You are a viewer of this project: an editor can change it. Ask one of its owners for that role.', 'forbidden_role'));
    show();
    await screen.findByTestId('share-runs');
    fireEvent.click(screen.getByRole('button', { name: 'Create link' }));
    expect((await screen.findByRole('alert')).textContent).toContain('You are a viewer of this project');
  });

  it('lists the links with who made them and whether they work, and revokes one after asking', async () => {
    revoke.mockResolvedValue({ data: undefined } as never);
    show([
      share({ id: 'sh1' }),
      share({ id: 'sh0', created_by: { user_id: 'bob', email: 'bob@example.com' }, runs: ['r1', 'r3'], active: false, revoked_at: '2026-03-02T10:00:00Z', status: 'revoked' }),
    ]);
    const rows = await screen.findAllByTestId('share-row');
    expect(rows.map((r) => r.dataset.state)).toEqual(['active', 'revoked']);
    expect(rows[0].textContent).toContain('By ana@example.com');
    expect(rows[0].textContent).toContain('1 question · expires');
    expect(rows[1].textContent).toContain('By you');
    expect(rows[1].textContent).toContain('2 questions · revoked');
    expect(within(rows[1]).queryByRole('button', { name: 'Revoke' })).toBeNull();

    fireEvent.click(within(rows[0]).getByRole('button', { name: 'Revoke' }));
    const confirm = screen.getByRole('dialog', { name: 'Revoke this link?' });
    fireEvent.click(within(confirm).getByRole('button', { name: 'Revoke' }));
    await waitFor(() => expect(revoke).toHaveBeenCalledWith({ path: { share_id: 'sh1' } }));
    await waitFor(() => expect(list).toHaveBeenCalledTimes(2));
  });

  it('shows a link whose author lost access as dead, and lets an owner (only) re-issue it', async () => {
    const dead = share({ id: 'sh3', created_by: { user_id: 'cy', email: 'cy@example.com' }, active: false, status: 'author_lost_access' });
    show([dead], 'editor');
    const [row] = await screen.findAllByTestId('share-row');
    expect(row.dataset.state).toBe('author lost access');
    expect(row.textContent).toContain('An owner can re-issue it.');
    expect(within(row).queryByRole('button', { name: 'Re-issue' })).toBeNull();
    expect(within(row).queryByRole('button', { name: 'Revoke' })).toBeNull();
  });

  it('re-issues a dead link for an owner and shows the new one once', async () => {
    reissue.mockResolvedValue({ data: { id: 'sh4', url: URL_ONCE, token: 'tok-abc', expires_at: '2026-03-31T10:00:00Z' } } as never);
    show([share({ id: 'sh3', active: false, status: 'author_lost_access' })], 'owner');
    const [row] = await screen.findAllByTestId('share-row');
    fireEvent.click(within(row).getByRole('button', { name: 'Re-issue' }));
    await waitFor(() => expect(reissue).toHaveBeenCalledWith({ path: { share_id: 'sh3' } }));
    const made = await screen.findAllByTestId('share-url');
    expect(made.map((input) => (input as HTMLInputElement).value)).toContain(URL_ONCE);
  });
});
