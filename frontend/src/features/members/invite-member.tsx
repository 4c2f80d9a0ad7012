import { Mail } from 'lucide-react';
import { Button } from '@/components/ui/button';
import { useCreateInvite } from '@/features/users/mutations';
import { InviteMade } from '@/features/users/user-dialogs';
import { EmailRoleForm } from './email-role-form';

/**
 * Owners invite someone who has no account yet: a one-time link (emailed when the server has SMTP),
 * shown once here, with which they set a password and land in this project with the chosen role.
 */
export function InviteMember({ projectId }: { projectId: string }) {
  const invite = useCreateInvite();
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
    <EmailRoleForm
      label="Invite by email"
      placeholder="Their email"
      roleLabel="Role of the invited person"
      button="Invite"
      icon={<Mail />}
      note="They get a one-time link to set their password and join."
      pending={invite.isPending}
      error={invite.error?.message ?? null}
      onSubmit={(email, role, done) => invite.mutate({ email, project_id: projectId, role }, { onSuccess: done })}
      onEdit={() => invite.reset()}
    />
  );
}
