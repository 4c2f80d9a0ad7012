import { createContext, useContext } from 'react';
import type { ProjectOut } from '@/client';
import { cn } from '@/lib/utils';

/** A member's role in a project: a viewer reads, an editor also changes, an owner also manages (API.md, "Members"). */
export type Role = ProjectOut['role'];

const RANK: Record<Role, number> = { viewer: 1, editor: 2, owner: 3 };

export const ROLES: { value: Role; label: string; hint: string }[] = [
  { value: 'viewer', label: 'Viewer', hint: 'reads everything, changes nothing' },
  { value: 'editor', label: 'Editor', hint: 'also uploads, asks, reviews and shares' },
  { value: 'owner', label: 'Owner', hint: 'also manages members, budgets, sources and the project' },
];

export const roleLabel = (role: Role) => ROLES.find((r) => r.value === role)!.label;

/** "a viewer", "an editor", "an owner". */
export const withArticle = (role: Role) => `${role === 'viewer' ? 'a' : 'an'} ${role}`;

/** Whether `role` can do what `need` can (an unknown role, while the project loads, is not held back: the server decides). */
export function can(role: Role | null | undefined, need: Role): boolean {
  return !role || RANK[role] >= RANK[need];
}

/**
 * Why a member cannot `what` ("ask questions", "delete the project"), said where the control is,
 * or null when they can. A viewer is told how to become an editor; what only owners do says so.
 */
export function blockedFor(role: Role | null | undefined, need: Role, what: string): string | null {
  if (can(role, need)) return null;
  if (need === 'owner') return `Only owners can ${what}; you are ${withArticle(role!)} of this project.`;
  return `Viewers can't ${what}; ask an owner to make you an editor.`;
}

/** "You are a viewer of this project…": the line a non-owner reads under the project's name. */
export function roleSentence(role: Role): string | null {
  if (role === 'viewer') return 'You are a viewer: you can read everything here, but not ask, upload or change anything.';
  if (role === 'editor') return 'You are an editor: you can ask, upload and change things; members, budgets and sources are the owners’.';
  return null;
}

const RoleContext = createContext<Role | null>(null);

/** The signed-in user's role in the project shown (set by the project and session screens). */
export const ProjectRoleProvider = RoleContext.Provider;

/** The signed-in user's role in the project shown; null outside one, or while it loads. */
export function useProjectRole(): Role | null {
  return useContext(RoleContext);
}

/** Why the signed-in user cannot `what` in the project shown, or null when they can. */
export function useBlocked(need: Role, what: string): string | null {
  return blockedFor(useProjectRole(), need, what);
}

/** "Viewer", "Editor", "Owner": the user's role in a project, where the project is listed. */
export function RoleBadge({ role, className, title }: { role: Role; className?: string; title?: string }) {
  return (
    <span
      className={cn(
        'shrink-0 rounded-full px-1.5 py-px text-[10px] font-medium',
        role === 'owner' ? 'text-muted-foreground' : role === 'editor' ? 'bg-primary/10 text-primary' : 'bg-amber-500/10 text-amber-700 dark:text-amber-400',
        className,
      )}
      title={title ?? `You are ${withArticle(role)} of this project`}
      data-testid="role-badge"
      data-role={role}
    >
      {roleLabel(role)}
    </span>
  );
}
