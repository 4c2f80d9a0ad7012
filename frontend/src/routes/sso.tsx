import { SsoLanding } from '@/features/auth/sso-landing';

export function SsoRoute() {
  return <SsoLanding />;
}
