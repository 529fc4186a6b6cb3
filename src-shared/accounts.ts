import { z } from 'zod';

export const EmailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+$/u, 'must be an email address');

/** Length only: a local app should not dictate composition rules. */
export const NewPasswordSchema = z.string().min(8, 'must be at least 8 characters').max(1024);

export const UserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  imageUrl: z.string().optional(),
});
export type User = z.infer<typeof UserSchema>;

export const WorkspaceRoleSchema = z.enum(['owner', 'member']);
export const WorkspaceSchema = z.object({
  organizationId: z.string(),
  name: z.string(),
  role: WorkspaceRoleSchema,
});
export type Workspace = z.infer<typeof WorkspaceSchema>;

export const SignInBodySchema = z.strictObject({
  email: z.string().max(254),
  password: z.string().max(1024),
});
export const SignInResponseSchema = z.object({ user: UserSchema });
export const MeResponseSchema = z.object({
  user: UserSchema,
  workspaces: z.array(WorkspaceSchema),
});
export type MeResponse = z.infer<typeof MeResponseSchema>;

export const ApiKeySummarySchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  label: z.string(),
  prefix: z.string().describe('The first characters of the key, for recognising it.'),
  createdAt: z.string(),
  lastUsedAt: z.string().optional(),
});
export type ApiKeySummary = z.infer<typeof ApiKeySummarySchema>;

/** The only response that ever carries a whole key. */
export const CreatedApiKeySchema = ApiKeySummarySchema.extend({ key: z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;

const Name = z.string().trim().min(1, 'must not be blank').max(200);
const ImageUrl = z
  .string()
  .max(2000)
  .regex(/^https?:\/\/\S+$/u, 'must be an http(s) URL');

export const CreateUserBodySchema = z.strictObject({
  email: EmailSchema,
  name: Name,
  password: NewPasswordSchema,
  imageUrl: ImageUrl.optional(),
});
export const CreateWorkspaceBodySchema = z.strictObject({ name: Name, ownerEmail: EmailSchema });
export const AddMemberBodySchema = z.strictObject({
  organizationId: z.string().max(100),
  email: EmailSchema,
});
export const CreateKeyBodySchema = z.strictObject({
  organizationId: z.string().max(100),
  label: z.string().trim().max(200).optional(),
});
export const RevokeKeyBodySchema = z.strictObject({
  organizationId: z.string().max(100),
  keyId: z.string().max(100),
});
export const ListKeysQuerySchema = z.object({ organizationId: z.string().max(100) });
