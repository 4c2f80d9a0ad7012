import { InviteAccept } from '@/features/auth/invite-accept';

export function InviteRoute() {
  return <InviteAccept />;
}
