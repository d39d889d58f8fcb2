//! The distributed batch's queue, on Redis Streams. Tasks are entries of the stream
//! `NAME:tasks`, read by the consumer group `workers`; a task a worker claimed and then
//! stopped answering for (its process died) is claimed by another worker once it has been
//! idle for the visibility timeout (`XAUTOCLAIM`), while a live worker keeps its task fresh.
//! Each attempt is counted (`NAME:attempts`), and the first result written wins (`HSETNX` on
//! `NAME:results`), so a task re-delivered after all never finishes twice. Its patch and
//! event log go to `NAME:patches` and `NAME:events`.

use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use redis::streams::{StreamAutoClaimOptions, StreamAutoClaimReply, StreamReadOptions, StreamReadReply};
use std::time::Duration;

const GROUP: &str = "workers";

/// A task handed to a worker: its stream entry, its id and its JSON line.
pub struct Delivery {
    pub entry: String,
    pub id: String,
    pub task: String,
}

/// A finished task as stored: its result's JSON, its patch and its event log.
pub struct Stored {
    pub result: String,
    pub patch: String,
    pub events: String,
}

#[derive(Clone)]
pub struct Queue {
    con: ConnectionManager,
    name: String,
}

fn failed(what: &str) -> impl Fn(redis::RedisError) -> String + '_ {
    move |e| format!("the queue: {what}: {e}")
}

impl Queue {
    /// Connects (reconnecting by itself after a lost connection) and makes sure the stream and
    /// its group exist.
    pub async fn connect(url: &str, name: &str) -> Result<Self, String> {
        let client = redis::Client::open(url).map_err(|e| format!("--queue {url}: {e}"))?;
        // A worker waits in XREADGROUP's BLOCK for a second at a time: replies may take that
        // long (the default cut them off at half a second).
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(Duration::from_secs(30)))
            .set_connection_timeout(Some(Duration::from_secs(10)));
        let con = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(|e| format!("cannot reach the queue at {url}: {e}"))?;
        let mut queue = Self {
            con,
            name: name.to_string(),
        };
        queue.ensure_group().await?;
        Ok(queue)
    }

    fn key(&self, what: &str) -> String {
        format!("{}:{what}", self.name)
    }

    /// The group, made with its stream unless it is there (a restarted Redis without its
    /// data has neither).
    pub async fn ensure_group(&mut self) -> Result<(), String> {
        let stream = self.key("tasks");
        let made: redis::RedisResult<()> = self.con.xgroup_create_mkstream(&stream, GROUP, "0").await;
        match made {
            Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
            other => other.map_err(failed("creating the workers' group")),
        }
    }

    /// Puts `task` (its JSON line) on the queue unless it is queued already.
    pub async fn enqueue(&mut self, id: &str, task: &str) -> Result<(), String> {
        let added: u32 = self
            .con
            .sadd(self.key("queued"), id)
            .await
            .map_err(failed("recording a task"))?;
        if added == 1 {
            let _: String = self
                .con
                .xadd(self.key("tasks"), "*", &[("id", id), ("task", task)])
                .await
                .map_err(failed("adding a task"))?;
        }
        Ok(())
    }

    /// The stored outcome of `id`, if it finished.
    pub async fn stored(&mut self, id: &str) -> Result<Option<Stored>, String> {
        let result: Option<String> = self
            .con
            .hget(self.key("results"), id)
            .await
            .map_err(failed("reading a result"))?;
        let Some(result) = result else { return Ok(None) };
        let patch: Option<String> = self
            .con
            .hget(self.key("patches"), id)
            .await
            .map_err(failed("reading a patch"))?;
        let events: Option<String> = self
            .con
            .hget(self.key("events"), id)
            .await
            .map_err(failed("reading a log"))?;
        Ok(Some(Stored {
            result,
            patch: patch.unwrap_or_default(),
            events: events.unwrap_or_default(),
        }))
    }

    /// Forgets `id`'s outcome and attempts, so that it can be queued and run again.
    pub async fn forget(&mut self, id: &str) -> Result<(), String> {
        for key in ["results", "patches", "events", "attempts", "queued"] {
            let key = self.key(key);
            let _: u32 = if key.ends_with(":queued") {
                self.con.srem(&key, id).await
            } else {
                self.con.hdel(&key, id).await
            }
            .map_err(failed("forgetting a task"))?;
        }
        Ok(())
    }

    /// The next task for `consumer`: one idle longer than `visibility` (its worker died)
    /// first, else a new one, waiting up to `wait`; `None` when there is none.
    pub async fn claim(
        &mut self,
        consumer: &str,
        visibility: Duration,
        wait: Duration,
    ) -> Result<Option<Delivery>, String> {
        let stream = self.key("tasks");
        let stale: StreamAutoClaimReply = self
            .con
            .xautoclaim_options(
                &stream,
                GROUP,
                consumer,
                visibility.as_millis() as u64,
                "0-0",
                StreamAutoClaimOptions::default().count(1),
            )
            .await
            .map_err(failed("claiming a stale task"))?;
        if let Some(entry) = stale.claimed.into_iter().next() {
            return Ok(delivery(entry));
        }
        let options = StreamReadOptions::default()
            .group(GROUP, consumer)
            .count(1)
            .block(wait.as_millis() as usize);
        let fresh: Option<StreamReadReply> = self
            .con
            .xread_options(&[&stream], &[">"], &options)
            .await
            .map_err(failed("reading a task"))?;
        Ok(fresh
            .and_then(|reply| reply.keys.into_iter().next())
            .and_then(|key| key.ids.into_iter().next())
            .and_then(delivery))
    }

    /// Counts an attempt at `id`; the attempts so far.
    pub async fn attempt(&mut self, id: &str) -> Result<u64, String> {
        self.con
            .hincr(self.key("attempts"), id, 1)
            .await
            .map_err(failed("counting an attempt"))
    }

    /// Whether `id` has a result already.
    pub async fn finished(&mut self, id: &str) -> Result<bool, String> {
        self.con
            .hexists(self.key("results"), id)
            .await
            .map_err(failed("reading a result"))
    }

    /// Tells the group that `consumer` still works on `entry` (its idle time starts again).
    pub async fn keep(&mut self, consumer: &str, entry: &str) -> Result<(), String> {
        redis::cmd("XCLAIM")
            .arg(self.key("tasks"))
            .arg(GROUP)
            .arg(consumer)
            .arg(0)
            .arg(entry)
            .arg("JUSTID")
            .query_async::<redis::Value>(&mut self.con)
            .await
            .map(drop)
            .map_err(failed("keeping a task"))
    }

    /// Stores `stored` as `id`'s outcome unless one is there (the first wins), then takes
    /// `entry` off the queue. Whether this outcome was the one kept.
    pub async fn finish(&mut self, entry: &str, id: &str, stored: &Stored) -> Result<bool, String> {
        let first: bool = self
            .con
            .hset_nx(self.key("results"), id, &stored.result)
            .await
            .map_err(failed("writing a result"))?;
        if first {
            let _: () = self
                .con
                .hset(self.key("patches"), id, &stored.patch)
                .await
                .map_err(failed("writing a patch"))?;
            let _: () = self
                .con
                .hset(self.key("events"), id, &stored.events)
                .await
                .map_err(failed("writing a log"))?;
        }
        self.done(entry).await?;
        Ok(first)
    }

    /// Takes `entry` off the queue.
    pub async fn done(&mut self, entry: &str) -> Result<(), String> {
        let stream = self.key("tasks");
        let _: u32 = self
            .con
            .xack(&stream, GROUP, &[entry])
            .await
            .map_err(failed("acknowledging a task"))?;
        let _: u32 = self
            .con
            .xdel(&stream, &[entry])
            .await
            .map_err(failed("removing a task"))?;
        Ok(())
    }
}

fn delivery(entry: redis::streams::StreamId) -> Option<Delivery> {
    let id: String = entry.get("id")?;
    let task: String = entry.get("task")?;
    Some(Delivery {
        entry: entry.id,
        id,
        task,
    })
}
