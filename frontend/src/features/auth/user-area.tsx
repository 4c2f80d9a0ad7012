import { useQuery } from '@tanstack/react-query';
import { ChevronsUpDown, KeyRound, LogOut, Monitor, Moon, Sun, UsersRound } from 'lucide-react';
import { useState } from 'react';
import { Link } from 'react-router';
import { Button } from '@/components/ui/button';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuRadioGroup,
  DropdownMenuRadioItem,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu';
import { MyStorage } from '@/features/storage/storage-usage';
import { type ThemeChoice, useThemeChoice } from '@/lib/theme';
import { useAuthStore } from './auth-store';
import { ChangePasswordDialog } from './change-password-dialog';
import { meQuery } from './queries';

const THEMES = [
  { value: 'system', label: 'System', Icon: Monitor },
  { value: 'light', label: 'Light', Icon: Sun },
  { value: 'dark', label: 'Dark', Icon: Moon },
] as const;

/** The colour theme: the system's (followed as it changes; the default), light or dark. */
function ThemeMenu() {
  const [choice, setChoice] = useThemeChoice();
  const chosen = THEMES.find((t) => t.value === choice) ?? THEMES[0];
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button
          variant="ghost"
          size="icon-sm"
          aria-label={`Theme: ${chosen.label}`}
          title={`Theme: ${chosen.label}`}
          className="data-[state=open]:bg-muted data-[state=open]:text-foreground"
        >
          <chosen.Icon />
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="end" side="top" className="w-40">
        <DropdownMenuLabel>Theme</DropdownMenuLabel>
        <DropdownMenuRadioGroup aria-label="Theme" value={choice} onValueChange={(v) => setChoice(v as ThemeChoice)}>
          {THEMES.map(({ value, label, Icon }) => (
            <DropdownMenuRadioItem key={value} value={value}>
              <Icon className="text-muted-foreground" /> {label}
            </DropdownMenuRadioItem>
          ))}
        </DropdownMenuRadioGroup>
      </DropdownMenuContent>
    </DropdownMenu>
  );
}

/** The foot of the sidebar: who is signed in, their account menu, the theme and signing out. */
export function UserArea({ onNavigate }: { onNavigate?: () => void }) {
  const stored = useAuthStore((s) => s.auth?.user);
  const signOut = useAuthStore((s) => s.signOut);
  // The stored user until the server answers: an administrator may have changed the role since.
  const me = useQuery({ ...meQuery(), placeholderData: stored });
  const user = me.data;
  const [changing, setChanging] = useState(false);
  return (
    <div className="flex items-center gap-1 border-t px-2 py-2">
      <DropdownMenu>
        <DropdownMenuTrigger asChild>
          <button
            type="button"
            aria-label={`Account: ${user?.email ?? ''}`}
            className="flex min-w-0 flex-1 cursor-pointer items-center gap-1.5 rounded-md px-2 py-1.5 text-left text-xs text-muted-foreground outline-none hover:bg-muted hover:text-foreground focus-visible:ring-2 focus-visible:ring-primary/30 data-[state=open]:bg-muted data-[state=open]:text-foreground"
          >
            <span className="min-w-0 flex-1 truncate" title={user?.email}>
              {user?.email}
            </span>
            <ChevronsUpDown className="size-3.5 shrink-0" />
          </button>
        </DropdownMenuTrigger>
        <DropdownMenuContent align="start" side="top" className="w-56">
          <DropdownMenuLabel>
            <span className="block truncate font-medium text-foreground">{user?.email}</span>
            {user?.is_admin ? 'Administrator' : 'User'}
          </DropdownMenuLabel>
          <DropdownMenuSeparator />
          <MyStorage />
          <DropdownMenuSeparator />
          <DropdownMenuItem onSelect={() => setChanging(true)}>
            <KeyRound /> Change password…
          </DropdownMenuItem>
          {user?.is_admin && (
            <DropdownMenuItem asChild>
              <Link to="/admin/users" onClick={onNavigate}>
                <UsersRound /> Users
              </Link>
            </DropdownMenuItem>
          )}
        </DropdownMenuContent>
      </DropdownMenu>
      <ThemeMenu />
      <Button variant="ghost" size="icon-sm" aria-label="Sign out" onClick={() => signOut()}>
        <LogOut />
      </Button>
      <ChangePasswordDialog open={changing} onOpenChange={setChanging} />
    </div>
  );
}
