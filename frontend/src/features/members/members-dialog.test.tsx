import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { addMember, createInvite, listInvites, listMembers, removeMember, revokeInvite, updateMember, type InviteOut, type MemberOut, type ProjectOut } from '@/client';
import { useAuthStore } from '@/features/auth/auth-store';
import { ApiError } from '@/lib/api';
import { MembersDialog, memberUsage } from './members-dialog';
import { memberKeys } from './queries';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  addMember: vi.fn(),
  listMembers: vi.fn(),
  removeMember: vi.fn(),
  updateMember: vi.fn(),
  createInvite: vi.fn(),
  listInvites: vi.fn(),
  revokeInvite: vi.fn(),
  listProjects: vi.fn(async () => ({ data: { items: [], total: 0 } })),
}));
const add = vi.mocked(addMember);
const patch = vi.mocked(updateMember);
const remove = vi.mocked(removeMember);
const invite = vi.mocked(createInvite);
const invites = vi.mocked(listInvites);
const revoke = vi.mocked(revokeInvite);

const waiting = (over: Partial<InviteOut>): InviteOut => ({
  id: 'i',
  email: 'x@example.com',
  project_id: 'p',
  project_name: 'Sales',
  role: 'editor',
  created_by: null,
  created_at: '2026-11-29T08:00:00Z',
  expires_at: '2026-12-06T08:00:00Z',
  accepted_at: null,
  revoked_at: null,
  status: 'pending',
  email_status: 'not_sent',
  email_error: null,
  ...over,
});

const member = (over: Partial<MemberOut>): MemberOut => ({
  user_id: 'u',
  email: 'u@example.com',
  role: 'viewer',
  added_at: '2026-01-05T10:00:00Z',
  tokens_in: 0,
  tokens_out: 0,
  cost_usd: null,
  runs: 0,
  ...over,
});
const ana = member({ user_id: 'ana', email: 'ana@example.com', role: 'owner', runs: 3, tokens_in: 12_000, tokens_out: 345, cost_usd: 0.02 });
const bob = member({ user_id: 'bob', email: 'bob@example.com', role: 'editor', runs: 1, tokens_in: 90, tokens_out: 10, cost_usd: null });
const cy = member({ user_id: 'cy', email: 'cy@example.com', role: 'viewer' });

const project = (role: ProjectOut['role']) => ({ id: 'p', name: 'Sales', role }) as ProjectOut;

function show(me: string, role: ProjectOut['role'], members: MemberOut[] = [ana, bob, cy]) {
  useAuthStore.setState({ auth: { token: 't', expiresAt: '2099-01-01T00:00:00Z', user: { id: me } as never } });
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  const page = { items: members, total: members.length };
  qc.setQueryData(memberKeys.project('p'), page);
  vi.mocked(listMembers).mockResolvedValue({ data: page } as never);
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <MembersDialog project={project(role)} open onOpenChange={() => undefined} />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const row = (email: string) => within(screen.getAllByTestId('member-row').find((r) => r.dataset.email === email)!);

beforeEach(() => {
  add.mockReset();
  patch.mockReset();
  remove.mockReset();
  invite.mockReset();
  revoke.mockReset();
  invites.mockReset();
  invites.mockResolvedValue({ data: { items: [], total: 0 } } as never);
});

describe('memberUsage', () => {
  it("says what a member's questions spent", () => {
    expect(memberUsage(ana)).toBe('3 questions · 12,345 tokens · $0.02');
    expect(memberUsage(bob)).toBe('1 question · 100 tokens');
    expect(memberUsage(cy)).toBe('No questions yet');
  });
});

describe('MembersDialog', () => {
  it("shows a viewer the members, their roles and usage, and lets them leave, nothing more", () => {
    show('cy', 'viewer');
    expect(screen.queryByLabelText('Add a member')).toBeNull();
    expect(screen.queryByLabelText('Invite by email')).toBeNull();
    expect(screen.queryByText('Pending invites')).toBeNull();
    expect(invites).not.toHaveBeenCalled();
    expect(screen.getByTestId('members-blocked').textContent).toBe(
      'Only owners can add or remove members and change their roles; you are a viewer of this project.',
    );
    expect(row('ana@example.com').getByTestId('member-role').textContent).toBe('Owner');
    expect(row('ana@example.com').getByTestId('member-usage').textContent).toBe('3 questions · 12,345 tokens · $0.02');
    expect(row('bob@example.com').getByTestId('member-role').textContent).toBe('Editor');
    expect(row('bob@example.com').queryByRole('button', { name: /Remove/ })).toBeNull();
    expect(row('cy@example.com').getByText('You')).toBeTruthy();
    expect(row('cy@example.com').getByRole('button', { name: 'Leave' })).toBeTruthy();
  });

  it('lets an owner add a member by email with a role', async () => {
    add.mockResolvedValue({ data: member({ user_id: 'dee', email: 'dee@example.com', role: 'viewer' }) } as never);
    show('ana', 'owner');
    fireEvent.change(screen.getByLabelText('Add a member'), { target: { value: ' dee@example.com ' } });
    fireEvent.change(screen.getByLabelText('Role of the new member'), { target: { value: 'viewer' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add' }));
    await screen.findByText('dee@example.com is now a viewer.');
    expect(add).toHaveBeenCalledWith({ path: { project_id: 'p' }, body: { email: 'dee@example.com', role: 'viewer' } });
  });

  it("shows the server's sentence when the email has no account", async () => {
    add.mockRejectedValue(new ApiError(404, 'No user has the email x@example.com: an administrator creates their account first.', 'user_not_found'));
    show('ana', 'owner');
    fireEvent.change(screen.getByLabelText('Add a member'), { target: { value: 'x@example.com' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add' }));
    expect((await screen.findByRole('alert')).textContent).toBe('No user has the email x@example.com: an administrator creates their account first.');
  });

  it("lets an owner change a member's role and remove a member", async () => {
    patch.mockResolvedValue({ data: { ...bob, role: 'viewer' } } as never);
    remove.mockResolvedValue({ data: undefined } as never);
    show('ana', 'owner');
    fireEvent.change(row('bob@example.com').getByLabelText('Role of bob@example.com'), { target: { value: 'viewer' } });
    await screen.findByText('bob@example.com is now a viewer.');
    expect(patch).toHaveBeenCalledWith({ path: { project_id: 'p', user_id: 'bob' }, body: { role: 'viewer' } });

    fireEvent.click(row('cy@example.com').getByRole('button', { name: 'Remove cy@example.com' }));
    const confirm = screen.getByRole('dialog', { name: 'Remove this member?' });
    fireEvent.click(within(confirm).getByRole('button', { name: 'Remove' }));
    await screen.findByText('cy@example.com is no longer a member.');
    expect(remove).toHaveBeenCalledWith({ path: { project_id: 'p', user_id: 'cy' } });
  });

  it("tells the last owner why they cannot leave, in the server's words", async () => {
    const said = "This is the project's last owner: make another member an owner first (or delete the project).";
    remove.mockRejectedValue(new ApiError(409, said, 'last_owner'));
    show('ana', 'owner');
    fireEvent.click(row('ana@example.com').getByRole('button', { name: 'Leave' }));
    fireEvent.click(within(screen.getByRole('dialog', { name: 'Leave this project?' })).getByRole('button', { name: 'Leave' }));
    await waitFor(() => expect(screen.getByTestId('members-notice').textContent).toBe(said));
    expect(screen.getByTestId('members-notice').getAttribute('role')).toBe('alert');
    expect(screen.getByTestId('members-dialog')).toBeTruthy();
  });

  it('lets an owner invite by email with a role: the link shown once with a copy button, and the email status', async () => {
    invite.mockResolvedValue({
      data: {
        id: 'i1',
        url: 'http://wb.example/invite#secret-token',
        token: 'secret-token',
        expires_at: '2026-12-06T10:00:00Z',
        email: 'new@example.com',
        project_id: 'p',
        role: 'viewer',
        email_status: 'not_sent',
      },
    } as never);
    show('ana', 'owner');
    fireEvent.change(screen.getByLabelText('Invite by email'), { target: { value: ' new@example.com ' } });
    fireEvent.change(screen.getByLabelText('Role of the invited person'), { target: { value: 'viewer' } });
    fireEvent.click(screen.getByRole('button', { name: 'Invite' }));
    await waitFor(() => expect((screen.getByLabelText('The invite link') as HTMLInputElement).value).toBe('http://wb.example/invite#secret-token'));
    expect(invite).toHaveBeenCalledWith({ body: { email: 'new@example.com', project_id: 'p', role: 'viewer' } });
    expect(screen.getByTestId('invite-made').textContent).toContain('This server sends no email: pass the link on yourself.');
    expect(within(screen.getByTestId('invite-made')).getByRole('button', { name: /Copy/ })).toBeTruthy();
    // Once gone, the link is not shown again: the form comes back empty.
    fireEvent.click(screen.getByRole('button', { name: 'Invite someone else' }));
    await waitFor(() => expect(screen.queryByTestId('invite-made')).toBeNull());
    expect((screen.getByLabelText('Invite by email') as HTMLInputElement).value).toBe('');
  });

  it("lists the project's pending invites, with how their email went, and revokes one", async () => {
    invites.mockResolvedValue({
      data: {
        items: [
          waiting({ id: 'i1', email: 'wait@example.com', email_status: 'failed', email_error: 'The mail server refused: 550 no such user.' }),
          waiting({ id: 'i2', email: 'done@example.com', status: 'accepted', accepted_at: '2026-11-29T09:00:00Z' }),
        ],
        total: 2,
      },
    } as never);
    revoke.mockResolvedValue({ data: undefined } as never);
    show('ana', 'owner');
    const list = await screen.findByRole('list', { name: 'Pending invites' });
    expect(invites).toHaveBeenCalledWith({ query: { limit: 100, project_id: 'p' } });
    const rows = within(list).getAllByTestId('invite-row');
    expect(rows.map((r) => r.dataset.email)).toEqual(['wait@example.com']);
    expect(rows[0].textContent).toContain('Email failed');
    expect(rows[0].textContent).toContain('The mail server refused: 550 no such user.');
    fireEvent.click(within(rows[0]).getByRole('button', { name: 'Revoke' }));
    await waitFor(() => expect(revoke).toHaveBeenCalledWith({ path: { invite_id: 'i1' } }));
  });
});
