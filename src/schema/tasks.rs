//! Tasks (2025-11-25 only, experimental): durable requests whose result is
//! fetched later with `tasks/get` / `tasks/result`.

use super::version::{V2025_11_25, only};
use super::walker::{Field, Obj, Ty};

/// `task` on a task-augmented request (`tools/call`, `sampling/createMessage`,
/// `elicitation/create`): asks the receiver to answer with a task.
pub(crate) const TASK_METADATA: Field = Field::opt(
    "task",
    Ty::Obj(&Obj {
        fields: &[Field::opt("ttl", Ty::Int)],
    }),
)
.within(only(V2025_11_25));

/// The state of a task, as `tasks/get`, `tasks/cancel` and
/// `notifications/tasks/status` report it (its members sit at the top level).
pub(crate) static TASK: Obj = Obj {
    fields: &[
        Field::req("taskId", Ty::Str),
        Field::req(
            "status",
            Ty::Enum(&[
                "working",
                "input_required",
                "completed",
                "failed",
                "cancelled",
            ]),
        ),
        Field::opt("statusMessage", Ty::Str),
        Field::req("createdAt", Ty::Str),
        Field::req("lastUpdatedAt", Ty::Str),
        Field::req("ttl", Ty::AnyOf(&[Ty::Int, Ty::Null])),
        Field::opt("pollInterval", Ty::Int),
    ],
};

/// The immediate answer to a task-augmented request.
pub(crate) static CREATE_TASK_RESULT: Obj = Obj {
    fields: &[Field::req("task", Ty::Obj(&TASK))],
};

/// `params` of `tasks/get`, `tasks/result` and `tasks/cancel`.
pub(crate) static TASK_ID: Obj = Obj {
    fields: &[Field::req("taskId", Ty::Str)],
};

/// The `tasks/list` result.
pub(crate) static LIST_TASKS: Obj = Obj {
    fields: &[
        Field::req("tasks", Ty::ArrayOf(&Ty::Obj(&TASK))),
        Field::opt("nextCursor", Ty::Str),
    ],
};

/// Versions with tasks.
pub(crate) const TASKS: super::version::Versions = only(V2025_11_25);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ViolationKind;
    use crate::schema::walker::Walker;
    use serde_json::json;

    #[test]
    fn tasks_need_a_ttl_that_may_be_null() {
        let mut out = Vec::new();
        let task = json!({"taskId": "t", "status": "working", "createdAt": "x", "lastUpdatedAt": "x", "ttl": null});
        Walker::new(V2025_11_25, ViolationKind::ResultShape, "", &mut out)
            .check(&Ty::Obj(&TASK), &task);
        assert!(out.is_empty());
        let task = json!({"taskId": "t", "status": "done", "createdAt": "x", "lastUpdatedAt": "x"});
        Walker::new(V2025_11_25, ViolationKind::ResultShape, "", &mut out)
            .check(&Ty::Obj(&TASK), &task);
        let messages: Vec<&str> = out.iter().map(|v| v.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`/status` must be one of working, input_required, completed, failed, cancelled; found \"done\"",
                "`/ttl` is required (an integer or null)"
            ]
        );
    }
}
