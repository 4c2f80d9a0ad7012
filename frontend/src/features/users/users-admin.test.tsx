import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createInvite, createUser, listInvites, listUsers, revokeInvite, updateUser, type InviteOut, type ListedUserOut } from '@/client';
import { ApiError } from '@/lib/api';
import { userKeys } from './queries';
import { OWN_ACCOUNT, UsersAdmin } from './users-admin';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  createUser: vi.fn(),
  listUsers: vi.fn(),
  updateUser: vi.fn(),
  createInvite: vi.fn(),
  listInvites: vi.fn(),
  revokeInvite: vi.fn(),
  listProjects: vi.fn(async () => ({ data: { items: [{ id: 'p1', name: 'Sales', role: 'owner' }], total: 1 } })),
}));
const list = vi.mocked(listUsers);
const create = vi.mocked(createUser);
const patch = vi.mocked(updateUser);
const invite = vi.mocked(createInvite);
const invites = vi.mocked(listInvites);
const revoke = vi.mocked(revokeInvite);

const pendingInvite: InviteOut = {
  id: 'i',
  email: 'x@example.com',
  project_id: null,
  project_name: null,
  role: null,
  created_by: null,
  created_at: '2026-11-29T08:00:00Z',
  expires_at: '2026-12-06T08:00:00Z',
  accepted_at: null,
  revoked_at: null,
  status: 'pending',
  email_status: 'not_sent',
  email_error: null,
};

const user = (over: Partial<ListedUserOut>): ListedUserOut => ({
  id: 'u',
  email: 'u@example.com',
  is_admin: false,
  disabled: false,
  created_at: '2026-01-05T10:00:00Z',
  password_changed_at: null,
  ...over,
});
const admin = user({ id: 'a', email: 'admin@example.com', is_admin: true });
const ana = user({ id: 'b', email: 'ana@example.com' });

function show(users: ListedUserOut[] = [admin, ana]) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(userKeys.all, { items: users, total: users.length });
  // A change refetches the list.
  list.mockResolvedValue({ data: { items: users, total: users.length } } as never);
  render(
    <QueryClientProvider client={qc}>
      <UsersAdmin me={admin} />
    </QueryClientProvider>,
  );
  return qc;
}

const row = (email: string) => screen.getAllByTestId('user-row').find((r) => r.dataset.email === email)!;
const button = (email: string, name: string) => within(row(email)).getByRole('button', { name }) as HTMLButtonElement;

beforeEach(() => {
  create.mockReset();
  patch.mockReset();
  invite.mockReset();
  invites.mockReset();
  invites.mockResolvedValue({ data: { items: [], total: 0 } } as never);
});

describe('UsersAdmin', () => {
  it('lists each user with role, status and dates', () => {
    show([admin, { ...ana, disabled: true, password_changed_at: '2026-02-01T09:00:00Z' }]);
    const mine = within(row('admin@example.com'));
    expect(mine.getByText('You')).toBeTruthy();
    expect(mine.getByText('Administrator')).toBeTruthy();
    expect(mine.getByText('Active')).toBeTruthy();
    expect(mine.getByText('Never')).toBeTruthy();
    const hers = within(row('ana@example.com'));
    expect(hers.getByText('User')).toBeTruthy();
    expect(hers.getByText('Disabled')).toBeTruthy();
    expect(hers.getByRole('button', { name: 'Enable' })).toBeTruthy();
    expect(hers.getByText('Feb 1, 2026', { exact: false })).toBeTruthy();
  });

  it('lists the projects each user is a member of, with their role there', () => {
    show([
      admin,
      {
        ...ana,
        projects: [
          { id: 'p1', name: 'Sales 2026', role: 'editor' },
          { id: 'p2', name: 'Churn', role: 'viewer' },
        ],
      },
    ]);
    const projects = within(row('ana@example.com')).getAllByRole('listitem');
    expect(projects.map((p) => p.textContent)).toEqual(['Sales 2026Editor', 'ChurnViewer']);
    expect(within(projects[1]).getByText('Viewer').title).toBe('ana@example.com is a viewer of Churn');
    expect(within(row('admin@example.com')).getByText('None')).toBeTruthy();
  });

  it("cannot disable, demote or reset the administrator's own account, and says why", () => {
    show();
    const disable = button('admin@example.com', 'Disable');
    expect(disable.disabled).toBe(true);
    expect(disable.title).toBe(OWN_ACCOUNT.disable);
    expect(button('admin@example.com', 'Remove admin').title).toBe(OWN_ACCOUNT.demote);
    expect(button('admin@example.com', 'Reset password').disabled).toBe(true);
    expect(button('ana@example.com', 'Disable').disabled).toBe(false);
  });

  it('asks before disabling, then disables', async () => {
    patch.mockResolvedValue({ data: { ...ana, disabled: true } } as never);
    show();
    fireEvent.click(button('ana@example.com', 'Disable'));
    const dialog = screen.getByRole('dialog', { name: 'Disable this account?' });
    expect(dialog.textContent).toContain('ana@example.com will be signed out everywhere');
    expect(patch).not.toHaveBeenCalled();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Disable' }));
    await waitFor(() =>
      expect(screen.getByTestId('users-notice').textContent).toBe('ana@example.com is disabled: their logins and API tokens are refused.'),
    );
    expect(patch).toHaveBeenCalledWith({ path: { user_id: 'b' }, body: { disabled: true } });
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it("shows the server's sentence when it refuses a change", async () => {
    const detail = 'You cannot disable your own account or remove your own administrator role; another administrator can.';
    patch.mockRejectedValue(new ApiError(409, detail, 'cannot_change_self'));
    show();
    fireEvent.click(button('ana@example.com', 'Make admin'));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe(detail));
  });

  it('invites a new user by a link shown once; nobody types a password for them', async () => {
    invite.mockResolvedValue({
      data: {
        id: 'i1',
        url: 'http://wb.example/invite#secret-token',
        token: 'secret-token',
        expires_at: '2026-12-06T10:00:00Z',
        email: 'bo@example.com',
        project_id: null,
        role: null,
        email_status: 'not_sent',
      },
    } as never);
    show();
    fireEvent.click(screen.getByRole('button', { name: 'New user' }));
    const dialog = screen.getByRole('dialog', { name: 'New user' });
    expect(within(dialog).queryByLabelText('Password')).toBeNull();
    fireEvent.change(within(dialog).getByLabelText('Email'), { target: { value: 'bo@example.com' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Make invite' }));
    await waitFor(() => expect((within(dialog).getByLabelText('The invite link') as HTMLInputElement).value).toBe('http://wb.example/invite#secret-token'));
    expect(invite).toHaveBeenCalledWith({ body: { email: 'bo@example.com' } });
    expect(dialog.textContent).toContain('This server sends no email: pass the link on yourself.');
    expect(create).not.toHaveBeenCalled();
  });

  it('invites into a project with a role when the administrator picks one', async () => {
    invite.mockResolvedValue({
      data: { id: 'i1', url: 'http://wb.example/invite#t', token: 't', expires_at: '2026-12-06T10:00:00Z', email: 'bo@example.com', project_id: 'p1', role: 'owner', email_status: 'sending' },
    } as never);
    show();
    fireEvent.click(screen.getByRole('button', { name: 'New user' }));
    const dialog = screen.getByRole('dialog', { name: 'New user' });
    fireEvent.change(within(dialog).getByLabelText('Email'), { target: { value: 'bo@example.com' } });
    expect(within(dialog).queryByLabelText('Their role in the project')).toBeNull();
    await within(dialog).findByRole('option', { name: 'Sales' });
    fireEvent.change(within(dialog).getByLabelText('Project (optional)'), { target: { value: 'p1' } });
    fireEvent.change(within(dialog).getByLabelText('Their role in the project'), { target: { value: 'owner' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Make invite' }));
    await within(dialog).findByTestId('invite-made');
    expect(invite).toHaveBeenCalledWith({ body: { email: 'bo@example.com', project_id: 'p1', role: 'owner' } });
    expect(dialog.textContent).toContain('It is being emailed to them too');
  });

  it('creates a user with a generated password shown once, and shows why not when the email is taken', async () => {
    create.mockRejectedValueOnce(new ApiError(409, 'A user with email bo@example.com already exists.', 'email_taken'));
    create.mockResolvedValueOnce({
      data: { ...user({ id: 'c', email: 'bo@example.com', is_admin: true }), must_change_password: true, generated_password: 'Gen3rated-Pass' },
    } as never);
    show();
    fireEvent.click(screen.getByRole('button', { name: 'New user' }));
    const dialog = screen.getByRole('dialog', { name: 'New user' });
    fireEvent.change(within(dialog).getByLabelText('Email'), { target: { value: 'bo@example.com' } });
    fireEvent.click(within(dialog).getByRole('radio', { name: 'Generated password' }));
    fireEvent.click(within(dialog).getByRole('checkbox'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create user' }));
    await waitFor(() => expect(within(dialog).getByRole('alert').textContent).toBe('A user with email bo@example.com already exists.'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create user' }));
    await waitFor(() => expect((within(dialog).getByLabelText('The generated password') as HTMLInputElement).value).toBe('Gen3rated-Pass'));
    expect(create).toHaveBeenLastCalledWith({ body: { email: 'bo@example.com', is_admin: true } });
    expect(dialog.textContent).toContain('They must choose their own password when they first sign in with it.');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it("resets a user's password with a generated one, shown once", async () => {
    patch.mockResolvedValue({ data: { ...ana, must_change_password: true, generated_password: 'Fresh-Gen-Pass' } } as never);
    show();
    fireEvent.click(button('ana@example.com', 'Reset password'));
    const dialog = screen.getByRole('dialog', { name: 'Reset password' });
    expect(dialog.textContent).toContain('Their logins end at once');
    expect(within(dialog).queryByLabelText('New password')).toBeNull();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Generate new password' }));
    await waitFor(() => expect((within(dialog).getByLabelText('The generated password') as HTMLInputElement).value).toBe('Fresh-Gen-Pass'));
    expect(patch).toHaveBeenCalledWith({ path: { user_id: 'b' }, body: { generate_password: true } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.getByTestId('users-notice').textContent).toContain('New password generated for ana@example.com.'));
  });

  it('marks a user who must change their password, and lists invites with a way to revoke', async () => {
    invites.mockResolvedValue({
      data: {
        items: [
          { ...pendingInvite, id: 'i1', email: 'cy@example.com', email_status: 'failed', email_error: 'Could not reach the SMTP server smtp:587.' },
          { ...pendingInvite, id: 'i2', email: 'di@example.com', status: 'accepted', email_status: 'sent' },
        ],
        total: 2,
      },
    } as never);
    revoke.mockResolvedValue({ data: undefined } as never);
    show([admin, { ...ana, must_change_password: true }]);
    expect(within(row('ana@example.com')).getByText('Must change password')).toBeTruthy();
    const rows = await screen.findAllByTestId('invite-row');
    expect(rows.map((r) => r.dataset.email)).toEqual(['cy@example.com', 'di@example.com']);
    expect(rows[0].textContent).toContain('Could not reach the SMTP server smtp:587.');
    expect(rows[1].textContent).toContain('Accepted');
    expect(within(rows[1]).queryByRole('button', { name: 'Revoke' })).toBeNull();
    fireEvent.click(within(rows[0]).getByRole('button', { name: 'Revoke' }));
    await waitFor(() => expect(revoke).toHaveBeenCalledWith({ path: { invite_id: 'i1' } }));
  });
});
