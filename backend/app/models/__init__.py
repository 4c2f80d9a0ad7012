"""All tables, imported here so that `Base.metadata` knows every one of them."""

from app.models.audit import AuditChain, AuditEvent
from app.models.base import Base
from app.models.comments import Comment, Notification
from app.models.file_pins import SessionFilePin
from app.models.invites import Invite, SignInHandoff
from app.models.job_repairs import JobRepair, JobRepairStatus
from app.models.job_schedules import (
    DeliveryChannel,
    DeliveryStatus,
    JobDelivery,
    JobSchedule,
)
from app.models.jobs import Job, JobRun, JobRunStatus
from app.models.knowledge import (
    CheckResult,
    CheckRun,
    CheckRunStatus,
    KnowledgeItem,
    KnowledgeKind,
    KnowledgeStatus,
    ProjectCheck,
)
from app.models.projects import File, FileVersion, Project, ProjectMember, Session
from app.models.run_states import RunState, SnapshotChunk, SnapshotOrphanSuspect
from app.models.runs import (
    Artifact,
    Run,
    RunEventRow,
    RunFileRead,
    RunKind,
    RunStatus,
    RunStep,
)
from app.models.shares import Share
from app.models.sources import DataSource, SourceTable
from app.models.users import ApiToken, User

__all__ = [
    "ApiToken",
    "Artifact",
    "AuditChain",
    "AuditEvent",
    "Base",
    "CheckResult",
    "CheckRun",
    "CheckRunStatus",
    "Comment",
    "DataSource",
    "DeliveryChannel",
    "DeliveryStatus",
    "File",
    "FileVersion",
    "Invite",
    "Job",
    "JobDelivery",
    "JobRepair",
    "JobRepairStatus",
    "JobRun",
    "JobRunStatus",
    "JobSchedule",
    "KnowledgeItem",
    "KnowledgeKind",
    "KnowledgeStatus",
    "Notification",
    "Project",
    "ProjectCheck",
    "ProjectMember",
    "Run",
    "RunEventRow",
    "RunFileRead",
    "RunKind",
    "RunState",
    "RunStatus",
    "RunStep",
    "Session",
    "SessionFilePin",
    "Share",
    "SignInHandoff",
    "SnapshotChunk",
    "SnapshotOrphanSuspect",
    "SourceTable",
    "User",
]
