//! Every notification of every version and what its params must contain.

use serde_json::Value;

use super::common::{LOGGING_LEVEL, NOTIFICATION_META, SUBSCRIPTION_FILTER};
use super::tasks::{TASK, TASKS};
use super::version::{ALL, LEGACY, NONE, V2025_03_26, V2025_11_25, V2026_07_28, Versions, only};
use super::walker::{Field, Obj, Ty, Walker};

/// One notification.
pub(crate) struct Notification {
    pub(crate) name: &'static str,
    pub(crate) versions: Versions,
    pub(crate) params: Ty,
    /// Where `params` must be there.
    pub(crate) params_required: Versions,
}

impl Notification {
    /// A notification whose params may be left out.
    const fn bare(name: &'static str, versions: Versions) -> Notification {
        Notification {
            name,
            versions,
            params: Ty::Object,
            params_required: NONE,
        }
    }

    /// A notification that needs params of this shape.
    const fn with(name: &'static str, versions: Versions, params: &'static Obj) -> Notification {
        Notification {
            name,
            versions,
            params: Ty::Obj(params),
            params_required: ALL,
        }
    }
}

/// Every notification of every version.
pub(crate) static NOTIFICATIONS: [Notification; 12] = [
    Notification::with(
        "notifications/cancelled",
        ALL,
        &Obj {
            fields: &[
                // 2025-11-25 let a cancellation name no request (tasks).
                Field::req("requestId", Ty::Id).optional_in(only(V2025_11_25)),
                Field::opt("reason", Ty::Str),
            ],
        },
    ),
    Notification::bare("notifications/initialized", LEGACY),
    Notification::with(
        "notifications/progress",
        ALL,
        &Obj {
            fields: &[
                Field::req("progressToken", Ty::Id),
                Field::req("progress", Ty::Num),
                Field::opt("total", Ty::Num),
                Field::opt("message", Ty::Str).since(V2025_03_26),
            ],
        },
    ),
    Notification::with(
        "notifications/message",
        ALL,
        &Obj {
            fields: &[
                Field::req("level", LOGGING_LEVEL),
                Field::req("data", Ty::Any),
                Field::opt("logger", Ty::Str),
            ],
        },
    ),
    Notification::with(
        "notifications/resources/updated",
        ALL,
        &Obj {
            fields: &[Field::req("uri", Ty::Str)],
        },
    ),
    Notification::bare("notifications/resources/list_changed", ALL),
    Notification::bare("notifications/prompts/list_changed", ALL),
    Notification::bare("notifications/tools/list_changed", ALL),
    Notification::bare("notifications/roots/list_changed", LEGACY),
    Notification::with(
        "notifications/elicitation/complete",
        only(V2025_11_25),
        &Obj {
            fields: &[Field::req("elicitationId", Ty::Str)],
        },
    ),
    Notification::with("notifications/tasks/status", TASKS, &TASK),
    Notification::with(
        "notifications/subscriptions/acknowledged",
        only(V2026_07_28),
        &Obj {
            fields: &[Field::req("notifications", Ty::Obj(&SUBSCRIPTION_FILTER))],
        },
    ),
];

/// The notification named `name`, in whatever version it exists.
pub(crate) fn find(name: &str) -> Option<&'static Notification> {
    NOTIFICATIONS.iter().find(|n| n.name == name)
}

static PARAMS: Obj = Obj {
    fields: &[Field::opt("_meta", Ty::Obj(&NOTIFICATION_META))],
};

/// The `_meta` rule every notification follows, custom ones included.
pub(crate) fn check_meta(walker: &mut Walker<'_>, params: &Value) {
    walker.obj(&PARAMS, params);
}

/// Checks the params of `notification` (at the walker's pointer).
pub(crate) fn check_params(walker: &mut Walker<'_>, notification: &Notification, params: &Value) {
    if !params.is_object() {
        return walker.mismatch("an object", params);
    }
    walker.obj(&PARAMS, params);
    walker.check(&notification.params, params);
}

/// Checks a notification object's `params` member (present or not).
pub(crate) fn check_notification_params(
    walker: &mut Walker<'_>,
    notification: &Notification,
    message: &Value,
) {
    match message.get("params") {
        Some(params) if params.is_object() => {
            walker.at("params", |w| check_params(w, notification, params))
        }
        // Not an object: the envelope check reports it.
        Some(_) => {}
        None if notification.params_required.contains(walker.version) => {
            walker.missing("params", "an object", None)
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ViolationKind;
    use crate::schema::version::{V2024_11_05, Version};
    use serde_json::json;

    fn run(version: Version, name: &str, message: Value) -> Vec<String> {
        let mut out = Vec::new();
        let notification = find(name).unwrap();
        let mut walker = Walker::new(version, ViolationKind::Notification, "", &mut out);
        check_notification_params(&mut walker, notification, &message);
        out.into_iter().map(|v| v.message).collect()
    }

    #[test]
    fn cancellations_name_a_request_except_in_2025_11_25() {
        let message = json!({"params": {"reason": "bored"}});
        assert_eq!(
            run(V2024_11_05, "notifications/cancelled", message.clone()).len(),
            1
        );
        assert!(run(V2025_11_25, "notifications/cancelled", message.clone()).is_empty());
        assert_eq!(
            run(V2026_07_28, "notifications/cancelled", message),
            ["`/params/requestId` is required (a string or an integer)"]
        );
    }

    #[test]
    fn modern_notifications_tag_their_subscription() {
        let message =
            json!({"params": {"_meta": {"io.modelcontextprotocol/subscriptionId": true}}});
        assert_eq!(
            run(
                V2026_07_28,
                "notifications/tools/list_changed",
                message.clone()
            )
            .len(),
            1
        );
        assert!(run(V2025_11_25, "notifications/tools/list_changed", message).is_empty());
        assert_eq!(
            run(V2024_11_05, "notifications/progress", json!({})),
            ["`/params` is required (an object)"]
        );
    }
}
