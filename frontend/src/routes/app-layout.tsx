import { Menu } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Navigate, Outlet, useLocation } from 'react-router';
import { Button } from '@/components/ui/button';
import { Dialog as D } from 'radix-ui';
import { useAuthStore } from '@/features/auth/auth-store';
import { NotificationBell } from '@/features/notifications/bell';
import { NotificationsLive } from '@/features/notifications/live';
import { ForcedPasswordChange } from '@/features/auth/forced-password-change';
import { Sidebar } from '@/features/projects/sidebar';
import { SearchButton, SearchHost } from '@/features/search/search-dialog';
import { ModelBanner } from '@/features/system/model-banner';
import { SandboxBanner } from '@/features/system/sandbox-banner';
import { SESSION_EXPIRED } from '@/lib/api';

export function AppLayout() {
  const auth = useAuthStore((s) => s.auth);
  const location = useLocation();
  const [open, setOpen] = useState(false);
  const signOut = useAuthStore((s) => s.signOut);
  // Leave for the login page when the token expires, rather than on the next failing request.
  useEffect(() => {
    if (!auth?.expiresAt) return;
    const ms = new Date(auth.expiresAt).getTime() - Date.now();
    if (ms > 2 ** 31 - 1) return;
    const t = setTimeout(() => signOut(SESSION_EXPIRED), Math.max(ms, 0));
    return () => clearTimeout(t);
  }, [auth?.expiresAt, signOut]);
  if (!auth) return <Navigate to="/login" replace state={{ from: location.pathname }} />;
  // Nothing else asks the server before the user chose their own password (it would refuse).
  if (auth.user.must_change_password) return <ForcedPasswordChange />;
  return (
    <div className="flex h-full flex-col">
      <SearchHost />
      <NotificationsLive />
      <SandboxBanner />
      <ModelBanner />
      <div className="flex min-h-0 flex-1">
        <aside className="hidden w-64 shrink-0 border-r md:block">
          <Sidebar />
        </aside>
        <D.Root open={open} onOpenChange={setOpen}>
          <D.Portal>
            <D.Overlay className="fixed inset-0 z-40 bg-black/40 md:hidden" />
            <D.Content className="fixed inset-y-0 left-0 z-50 w-72 border-r shadow-xl md:hidden" aria-describedby={undefined}>
              <D.Title className="sr-only">Navigation</D.Title>
              <Sidebar onNavigate={() => setOpen(false)} />
            </D.Content>
          </D.Portal>
        </D.Root>
        <div className="flex min-w-0 flex-1 flex-col">
          <div className="flex items-center gap-2 border-b px-3 py-2 md:hidden">
            <Button variant="ghost" size="icon-sm" aria-label="Open navigation" onClick={() => setOpen(true)}>
              <Menu />
            </Button>
            <span className="font-semibold">Workbench</span>
            <span className="ml-auto" />
            <SearchButton compact />
            <NotificationBell />
          </div>
          <main className="min-h-0 flex-1">
            <Outlet />
          </main>
        </div>
      </div>
    </div>
  );
}
