import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Bell } from 'lucide-react';
import { Link } from 'react-router';
import { markNotificationsRead, type NotificationOut } from '@/client';
import { Button } from '@/components/ui/button';
import { DropdownMenu, DropdownMenuContent, DropdownMenuLabel, DropdownMenuSeparator, DropdownMenuTrigger } from '@/components/ui/dropdown-menu';
import { cn } from '@/lib/utils';
import { notificationKeys, notificationsQuery } from './queries';

/** Where a notification leads: its session, scrolled to the comment. */
export const notificationLink = (n: NotificationOut) => `/projects/${n.project_id}/sessions/${n.session_id}?run=${n.run_id}#comment-${n.comment_id}`;

/** The bell: how many notifications are unread, and the latest, each linking to its comment. */
export function NotificationBell({ className }: { className?: string }) {
  const qc = useQueryClient();
  const notifications = useQuery({ ...notificationsQuery(), meta: { silent: true } });
  const read = useMutation({
    mutationFn: async (ids?: string[]) => (await markNotificationsRead({ body: { ids: ids ?? null } })).data!,
    onSuccess: () => qc.invalidateQueries({ queryKey: notificationKeys.all }),
  });
  const unread = notifications.data?.unread ?? 0;
  const items = notifications.data?.items ?? [];
  const label = unread ? `Notifications: ${unread} unread` : 'Notifications';
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button variant="ghost" size="icon-sm" aria-label={label} title={label} className={cn('relative', className)} data-testid="notification-bell">
          <Bell />
          {unread > 0 && (
            <span
              className="absolute -top-0.5 -right-0.5 flex h-4 min-w-4 items-center justify-center rounded-full bg-primary px-1 text-[10px] font-semibold text-primary-foreground tabular-nums"
              data-testid="notification-count"
            >
              {unread > 99 ? '99+' : unread}
            </span>
          )}
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="end" className="w-80 max-w-[calc(100vw-1rem)]">
        <DropdownMenuLabel className="flex items-center justify-between">
          Notifications
          {unread > 0 && (
            <button type="button" className="text-xs font-normal text-primary hover:underline" onClick={() => read.mutate(undefined)}>
              Mark all read
            </button>
          )}
        </DropdownMenuLabel>
        <DropdownMenuSeparator />
        {items.length === 0 && <p className="px-2 py-3 text-sm text-muted-foreground">Nothing yet. Comments on your projects' answers show here.</p>}
        <ul className="max-h-96 overflow-y-auto">
          {items.map((n) => (
            <li key={n.id}>
              <Link
                to={notificationLink(n)}
                onClick={() => !n.read_at && read.mutate([n.id])}
                className={cn('block rounded-md px-2 py-2 text-sm hover:bg-muted', !n.read_at && 'bg-primary/5')}
                data-testid="notification"
              >
                <span className="flex items-baseline gap-2">
                  {!n.read_at && <span className="size-1.5 shrink-0 translate-y-[-1px] rounded-full bg-primary" aria-label="unread" />}
                  <span className="min-w-0 truncate font-medium">{n.actor_email}</span>
                  <span className="shrink-0 text-xs text-muted-foreground">commented</span>
                </span>
                <span className="mt-0.5 line-clamp-2 break-words text-muted-foreground">{n.text}</span>
              </Link>
            </li>
          ))}
        </ul>
      </DropdownMenuContent>
    </DropdownMenu>
  );
}
