import { useState, type FormEvent } from 'react';
import type { Invitation, Member } from '../../../../src-shared/accounts';
import { ApiError } from '../../api/client';
import {
  useAddMember,
  useAuthMethods,
  useMembers,
  useRemoveMember,
  useWithdrawInvitation,
} from '../../api/queries';
import { Avatar } from '../../components/Avatar';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { TextField } from '../../components/Field';
import { ErrorState, Loading } from '../../components/States';
import { useWorkspace } from '../../lib/workspace';

export function MembersPage() {
  const { workspace, me } = useWorkspace();
  const org = workspace.organizationId;
  const members = useMembers(org);
  const add = useAddMember(org);
  const remove = useRemoveMember(org);
  const withdraw = useWithdrawInvitation(org);
  // Local accounts sign in with a password: where passwords are off, none is offered.
  const passwords = useAuthMethods().data?.password !== false;
  const [form, setForm] = useState({ email: '', name: '', password: '' });
  const [newUser, setNewUser] = useState(false);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [withdrawing, setWithdrawing] = useState<Invitation | null>(null);
  const isOwner = workspace.role === 'owner';
  const error = add.error instanceof ApiError ? add.error : null;
  const invited = add.data && 'invitation' in add.data ? add.data.invitation : null;

  /** Switching between adding an existing account and creating one drops the last answer, which was about the other. */
  function chooseNewUser(on: boolean, email = form.email) {
    add.reset();
    setForm({ ...form, email });
    setNewUser(on);
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    add.mutate(newUser ? form : { email: form.email }, {
      onSuccess: () => {
        setForm({ email: '', name: '', password: '' });
        setNewUser(false);
      },
    });
  }

  return (
    <div className="page page-narrow">
      <header className="page-header">
        <h1>Members</h1>
      </header>
      {members.isPending ? (
        <Loading label="Loading members" />
      ) : members.isError ? (
        <ErrorState error={members.error} onRetry={() => void members.refetch()} />
      ) : (
        <ul className="members" aria-label={`Members of ${workspace.name}`}>
          {members.data.members.map((member) => (
            <li key={member.userId} className="member">
              <Avatar name={member.name} imageUrl={member.imageUrl} size={32} />
              <div className="member-text">
                <div>
                  {member.name}
                  {member.userId === me.user.id && <span className="muted"> (you)</span>}
                </div>
                <div className="muted small">{member.email}</div>
              </div>
              <span className="badge">{member.role === 'owner' ? 'Owner' : 'Member'}</span>
              {isOwner && member.userId !== me.user.id && (
                <button
                  type="button"
                  className="button button-small button-danger"
                  onClick={() => setRemoving(member)}
                >
                  Remove<span className="visually-hidden"> {member.name}</span>
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {members.data && members.data.invitations.length > 0 && (
        <>
          <h2>Invited</h2>
          <p className="muted small">They join {workspace.name} when they first sign in.</p>
          <ul className="members" aria-label={`Invited to ${workspace.name}`}>
            {members.data.invitations.map((invitation) => (
              <li key={invitation.email} className="member">
                <div className="member-text">
                  <div>{invitation.email}</div>
                  <div className="muted small">
                    Invited{invitation.invitedBy ? ` by ${invitation.invitedBy.name}` : ''}
                  </div>
                </div>
                <span className="badge">Invited</span>
                {isOwner && (
                  <button
                    type="button"
                    className="button button-small button-danger"
                    onClick={() => setWithdrawing(invitation)}
                  >
                    Withdraw<span className="visually-hidden"> the invitation of {invitation.email}</span>
                  </button>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      {(remove.error ?? withdraw.error) && (
        <p className="form-error" role="alert">
          {(remove.error ?? withdraw.error)?.message}
        </p>
      )}
      {isOwner ? (
        <form className="stack card" onSubmit={submit} noValidate>
          <h2>Add a member</h2>
          <TextField
            label="Email"
            type="email"
            value={form.email}
            onChange={(e) => setForm({ ...form, email: e.target.value })}
            error={error?.fieldError('body.email')}
          />
          {passwords && (
            <label className="checkbox">
              <input type="checkbox" checked={newUser} onChange={(e) => chooseNewUser(e.target.checked)} />{' '}
              Create a new local account for this person
            </label>
          )}
          {newUser && (
            <div className="field-row">
              <TextField
                label="Name"
                value={form.name}
                onChange={(e) => setForm({ ...form, name: e.target.value })}
                error={error?.fieldError('body.name')}
              />
              <TextField
                label="Password"
                type="password"
                autoComplete="new-password"
                value={form.password}
                onChange={(e) => setForm({ ...form, password: e.target.value })}
                error={error?.fieldError('body.password')}
              />
            </div>
          )}
          {invited && (
            <p role="status">
              No account has this email yet, so {invited.email} is invited: they join {workspace.name} when
              they first sign in.{' '}
              {passwords && (
                <button
                  type="button"
                  className="link-button"
                  onClick={() => chooseNewUser(true, invited.email)}
                >
                  Create a local account for this person
                </button>
              )}
            </p>
          )}
          {error && error.details.length === 0 && (
            <p className="form-error" role="alert">
              {error.message}
            </p>
          )}
          <div className="form-actions">
            <button type="submit" className="button button-primary" disabled={add.isPending}>
              Add member
            </button>
          </div>
        </form>
      ) : (
        <p className="muted">Only owners can add or remove members.</p>
      )}
      <ConfirmDialog
        open={withdrawing !== null}
        title="Withdraw this invitation?"
        body={`${withdrawing?.email ?? 'They'} will not join ${workspace.name} when they sign in.`}
        confirmLabel="Withdraw invitation"
        onCancel={() => setWithdrawing(null)}
        onConfirm={() => {
          if (withdrawing) withdraw.mutate(withdrawing.email);
          setWithdrawing(null);
        }}
      />
      <ConfirmDialog
        open={removing !== null}
        title="Remove this member?"
        body={`${removing?.name ?? 'They'} will lose access to ${workspace.name}. Their sessions stay.`}
        confirmLabel="Remove member"
        onCancel={() => setRemoving(null)}
        onConfirm={() => {
          if (removing) remove.mutate(removing.userId);
          setRemoving(null);
        }}
      />
    </div>
  );
}
