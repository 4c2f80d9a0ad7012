import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Loader2, PlayCircle } from 'lucide-react';
import { useNavigate } from 'react-router';
import { toast } from 'sonner';
import { openDemoProject } from '@/client';
import { Button } from '@/components/ui/button';
import { projectKeys } from '@/features/projects/queries';
import { cn } from '@/lib/utils';

/** Opens the user's demo project (made on the first click, the same one after) at its recorded session. */
export function useOpenDemo() {
  const qc = useQueryClient();
  const navigate = useNavigate();
  return useMutation({
    mutationFn: async () => (await openDemoProject({ throwOnError: true })).data,
    onSuccess: (demo) => {
      void qc.invalidateQueries({ queryKey: projectKeys.all });
      void navigate(`/projects/${demo.project_id}/sessions/${demo.session_id}`);
    },
    onError: (e: unknown) => toast.error(e instanceof Error ? e.message : 'Could not open the demo project.'),
  });
}

/** "Open the demo project": a newcomer sees the product work before a model is connected. */
export function OpenDemoButton({ className, size = 'sm' }: { className?: string; size?: 'sm' | 'default' }) {
  const open = useOpenDemo();
  return (
    <Button size={size} variant="outline" className={cn('shrink-0', className)} onClick={() => open.mutate()} disabled={open.isPending} data-testid="open-demo">
      {open.isPending ? <Loader2 className="animate-spin" /> : <PlayCircle />} Open the demo project
    </Button>
  );
}
