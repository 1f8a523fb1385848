/** Plans and their limits, exactly as the spec's "Limits" table and contract §2 set them. */
export const PLAN_NAMES = ['starter', 'pro', 'ultra', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const SUBSCRIPTION_STATUSES = ['active', 'past_due', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export interface Plan {
  apiAccess: boolean;
  requestsPerMinute: number;
  dailyLimit: number;
  /** How many pixels an account may hold; `null` is unlimited. */
  pixelQuota: number | null;
}

export const PLANS: Record<PlanName, Plan> = {
  starter: { apiAccess: false, requestsPerMinute: 0, dailyLimit: 0, pixelQuota: 0 },
  pro: { apiAccess: true, requestsPerMinute: 500, dailyLimit: 720_000, pixelQuota: 10 },
  ultra: { apiAccess: true, requestsPerMinute: 2_000, dailyLimit: 2_880_000, pixelQuota: 50 },
  enterprise: {
    apiAccess: true,
    requestsPerMinute: 5_000,
    dailyLimit: 7_200_000,
    pixelQuota: null,
  },
};

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}

export function isSubscriptionStatus(value: string): value is SubscriptionStatus {
  return (SUBSCRIPTION_STATUSES as readonly string[]).includes(value);
}
