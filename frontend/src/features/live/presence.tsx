import { useAuthStore } from '@/features/auth/auth-store';
import { cn } from '@/lib/utils';
import { usePresenceStore } from './presence-store';

/** Up to this many faces; the rest are counted. */
const SHOWN = 4;

export function initials(email: string) {
  const name = email.split('@')[0] ?? '';
  const parts = name.split(/[._\-+]+/).filter(Boolean);
  const letters = parts.length > 1 ? parts[0][0] + parts[1][0] : name.slice(0, 2);
  return letters.toUpperCase() || '?';
}

/** Who has this session open now (the user among them), when anyone else does: initials, emails on hover. */
export function Presence({ sessionId, className }: { sessionId: string; className?: string }) {
  const users = usePresenceStore((s) => s.bySession[sessionId]);
  const me = useAuthStore((s) => s.auth?.user.id);
  if (!users || users.length < 2) return null;
  const others = users.filter((u) => u.user_id !== me);
  const label = `Here now: ${users.map((u) => (u.user_id === me ? `${u.email} (you)` : u.email)).join(', ')}`;
  return (
    <div className={cn('flex shrink-0 items-center -space-x-1.5', className)} title={label} aria-label={label} role="group" data-testid="presence">
      {others.slice(0, SHOWN).map((u) => (
        <span
          key={u.user_id}
          title={u.email}
          data-testid="presence-user"
          data-email={u.email}
          className="flex size-6 items-center justify-center rounded-full border-2 border-background bg-primary/15 text-[10px] font-semibold text-primary"
        >
          {initials(u.email)}
        </span>
      ))}
      {others.length > SHOWN && (
        <span className="flex size-6 items-center justify-center rounded-full border-2 border-background bg-muted text-[10px] text-muted-foreground">
          +{others.length - SHOWN}
        </span>
      )}
    </div>
  );
}
