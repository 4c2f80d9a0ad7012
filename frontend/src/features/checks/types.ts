import type { AppChecksSchemasCheckOut, CheckResultOut, CheckRunOut } from '@/client';

/**
 * A project's checks as the API gives them (API.md, "Project knowledge and checks"), from the
 * generated client. (The schema's generated name carries its module because the sources' check of
 * a connection is also `CheckOut`.)
 */
export type ProjectCheck = AppChecksSchemasCheckOut;
export type CheckRun = CheckRunOut;
export type CheckResult = CheckResultOut;
export type CheckRunStatus = CheckRunOut['status'];
