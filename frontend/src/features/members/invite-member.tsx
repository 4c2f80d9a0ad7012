import { Loader2, Mail } from 'lucide-react';
import { useId, useState } from 'react';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { type Role } from '@/features/projects/role';
import { RoleSelect, roleHint } from './role-select';
import { useCreateInvite } from '@/features/users/mutations';
import { InviteMade } from '@/features/users/user-dialogs';

/**
 * Owners invite someone who has no account yet: a one-time link (emailed when the server has SMTP),
 * shown once here, with which they set a password and land in this project with the chosen role.
 */
export function InviteMember({ projectId }: { projectId: string }) {
  const id = useId();
  const invite = useCreateInvite();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  if (invite.data)
    return (
      <div className="grid gap-2">
        <InviteMade invite={invite.data} />
        <Button variant="outline" size="sm" className="justify-self-start" onClick={() => invite.reset()}>
          <Mail /> Invite someone else
        </Button>
      </div>
    );
  return (
    <form
      className="grid gap-2"
      onSubmit={(e) => {
        e.preventDefault();
        if (!email.trim()) return;
        invite.mutate({ email: email.trim(), project_id: projectId, role }, { onSuccess: () => setEmail('') });
      }}
    >
      <label htmlFor={`${id}-email`} className="text-sm font-medium">
        Invite by email
      </label>
      <div className="flex flex-wrap gap-2">
        <Input
          id={`${id}-email`}
          type="email"
          placeholder="Their email"
          autoComplete="off"
          className="min-w-48 flex-1"
          value={email}
          onChange={(e) => {
            setEmail(e.target.value);
            invite.reset();
          }}
        />
        <RoleSelect label="Role of the invited person" value={role} onChange={setRole} />
        <Button type="submit" className="h-8" size="sm" disabled={!email.trim() || invite.isPending}>
          {invite.isPending ? <Loader2 className="animate-spin" /> : <Mail />} Invite
        </Button>
      </div>
      <p className="text-xs text-muted-foreground">
        {roleHint(role)}. They get a one-time link to set their password and join.
      </p>
      <FormError>{invite.error?.message ?? null}</FormError>
    </form>
  );
}
