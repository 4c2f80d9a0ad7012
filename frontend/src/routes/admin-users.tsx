import { useQuery } from '@tanstack/react-query';
import { useAuthStore } from '@/features/auth/auth-store';
import { meQuery } from '@/features/auth/queries';
import { UsersAdmin } from '@/features/users/users-admin';

export function AdminUsersRoute() {
  const stored = useAuthStore((s) => s.auth?.user);
  const me = useQuery({ ...meQuery(), placeholderData: stored });
  if (!me.data) return null;
  if (!me.data.is_admin) return <p className="p-8 text-sm text-muted-foreground">Only an administrator can manage users.</p>;
  return <UsersAdmin me={me.data} />;
}
