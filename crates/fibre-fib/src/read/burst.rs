//! The data path in bursts: a forwarding worker's 32-256 packets resolved
//! together, the LPM's lockstep walk ([`fibre_lpm::Poptrie::lookup_batch`])
//! run for the whole burst table by table in rule order, and only then each
//! key's semantics on the slot it found.
//!
//! One burst does, in chunks of [`BURST_CHUNK`] keys:
//!
//! 1. each key's flow (or its answer where none needs a lookup: a martian,
//!    limited broadcast, `0.0.0.0`), as the per-key path makes it;
//! 2. `fib_rules_lookup` (`net/core/fib_rules.c`) for all keys at once: for
//!    each rule in order, the selectors and action of every key still
//!    unanswered that has reached it ([`Fib::rule_step`], the per-key walk's
//!    own), then one batched walk of the rule's table for the keys it sends
//!    there ([`FamilyTable::longest_slots`]: the full-length prefixes' hash
//!    probe, then the LPM's batched leaves), then each of those keys'
//!    `fib_table_lookup` / `fib6_table_lookup` from its slot (backtracking
//!    to shorter prefixes, throw, rejects, the summaries) and the rule's
//!    suppressors ([`table_verdict`]). A key the table does not answer stays
//!    in the burst for the next rule, as it would go on alone;
//! 3. each key's answer from its lookup (route type, multipath hash), again
//!    the per-key path's own code; then, for IPv4 input, the source
//!    validations those answers still wait on (`fib_validate_source`), their
//!    reverse lookups made as one more burst through step 2.
//!
//! While no IPv4 rule was ever added or deleted, IPv4 takes the kernel's
//! merged local+main fast path instead of the rules (`fib_lookup` in
//! `include/net/ip_fib.h` without `CONFIG_IP_MULTIPLE_TABLES` rules): both
//! tables walked for the whole burst, then each key merged.
//!
//! So every answer is the per-key path's (`lookup_output_batch_v4` and its
//! kin, which stay as they are: the measured "before"); only the order of
//! the memory reads changes. Nothing allocates: the scratch arrays are on
//! the stack, a few KiB.

use std::net::{IpAddr, Ipv4Addr};

use fibre_base::{IpFamily, Ipv4, Ipv6};
use fibre_lpm::Key;

use crate::error::Errno;
use crate::fib::Fib;
use crate::read::batch::{output_flow_v6, FlowKeyV4, FlowKeyV6, Forward, Forward6};
use crate::read::input_batch::input_flow_v6;
use crate::read::lookup::{table_verdict, FibResult, Flow, Found6, Miss, RuleStep, Suppressible};
use crate::read::route_get::SourceCheck;
use crate::table::{FamilyTable, Table};
use crate::types::*;

/// Keys a burst resolves together; a longer burst is taken in chunks of
/// this many. A multiple of both families' LPM lanes (`Key::BATCH_LANES`:
/// 48 for IPv4, 24 for IPv6), and small enough that the scratch arrays
/// (about 8 KiB for IPv6) stay in L1.
pub const BURST_CHUNK: usize = 96;

// Positions in a chunk are kept as bytes.
const _: () = assert!(
    BURST_CHUNK <= 256,
    "positions within a chunk are kept as bytes; if this fires, widen them to u16"
);

/// Which lookup a burst does: the output path of locally generated
/// traffic, or the input path of packets received on a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `ip route get DST` (`ip_route_output_key`, `ip6_route_output`).
    Output,
    /// `ip route get DST from SRC iif DEV` on this link
    /// (`ip_route_input_slow`, `ip6_route_input`).
    Input(LinkIndex),
}

/// What the burst needs of a family beyond [`IpFamily`]: the FIB's
/// per-family key, answer and lookup result, and the per-key path's steps
/// around the LPM. The burst itself ([`Fib::burst`]) is written once over
/// this; the steps are each family's per-key code, where the kernel's
/// semantics differ (IPv4's merged fast path and source validation,
/// IPv6's strict oif and side array).
pub(crate) trait FibFamily: IpFamily<Bits: Key> {
    /// The public flow key ([`FlowKeyV4`], [`FlowKeyV6`]).
    type FlowKey: Copy;
    /// The public answer ([`Forward`], [`Forward6`]).
    type Answer: Copy;
    /// What `fib_lookup` finds ([`FibResult`], IPv6's [`Found6`]).
    type Found<'a>: Suppressible + Copy;
    /// The family as the FIB's types name it.
    const FAMILY: Family;
    /// Whether the input path validates sources (`fib_validate_source`,
    /// IPv4's rp_filter machinery; IPv6 has none).
    const VALIDATES_SOURCES: bool;

    /// The key's destination as an LPM key.
    fn dst_bits(key: &Self::FlowKey) -> Self::Bits;

    /// The family's half of a table.
    fn family_table(t: &Table) -> &FamilyTable<Self::Bits>;

    /// Starts fetching what [`FibFamily::table_at`] reads first of `slot`
    /// in `t`: IPv4 the entry, IPv6 the side array's word.
    fn prefetch(t: &FamilyTable<Self::Bits>, slot: u32);

    /// The flow the per-key path looks up for `key`, or (`Err`) its answer
    /// where it needs no lookup.
    fn flow(
        fib: &Fib,
        form: Form,
        key: &Self::FlowKey,
    ) -> Result<Flow, Result<Self::Answer, Errno>>;

    /// The per-key path's answer for `key` once its lookup found `found`,
    /// and the source validation (`fib_validate_source`) that still gates
    /// it, if any: the burst makes those together afterwards.
    fn answer<'a>(
        fib: &'a Fib,
        form: Form,
        key: &Self::FlowKey,
        flow: &Flow,
        found: Result<Self::Found<'a>, Errno>,
    ) -> (Result<Self::Answer, Errno>, Option<SourceCheck>);

    /// The per-key lookup of `flow` (`fib_lookup`, the data path's).
    fn lookup_one<'a>(fib: &'a Fib, flow: &Flow) -> Result<Self::Found<'a>, Errno>;

    /// One table's lookup of `flow` once the longest prefix's slot for
    /// `dst` is known.
    fn table_at<'a>(
        fib: &'a Fib,
        t: &'a Table,
        table: TableId,
        flow: &Flow,
        dst: Self::Bits,
        longest: Option<u32>,
    ) -> Result<Self::Found<'a>, Miss>;

    /// Where the kernel bypasses the rules for this family's lookups,
    /// those of the whole burst into `found`, and true; false to walk the
    /// rules.
    fn fast_path<'a>(
        _fib: &'a Fib,
        _flows: &[Flow],
        _dsts: &[Self::Bits],
        _found: &mut [Result<Self::Found<'a>, Errno>],
    ) -> bool {
        false
    }
}

impl FibFamily for Ipv4 {
    type FlowKey = FlowKeyV4;
    type Answer = Forward;
    type Found<'a> = FibResult<'a>;
    const FAMILY: Family = Family::V4;
    const VALIDATES_SOURCES: bool = true;

    #[inline(always)]
    fn dst_bits(key: &FlowKeyV4) -> u32 {
        key.dst
    }

    #[inline(always)]
    fn family_table(t: &Table) -> &FamilyTable<u32> {
        &t.v4
    }

    #[inline(always)]
    fn prefetch(t: &FamilyTable<u32>, slot: u32) {
        t.prefetch_entry(slot);
    }

    #[inline(always)]
    fn flow(fib: &Fib, form: Form, key: &FlowKeyV4) -> Result<Flow, Result<Forward, Errno>> {
        match form {
            Form::Output => fib.output_flow_v4(key),
            Form::Input(iif) => fib.input_flow_v4(iif, key),
        }
    }

    #[inline(always)]
    fn answer<'a>(
        fib: &'a Fib,
        form: Form,
        key: &FlowKeyV4,
        flow: &Flow,
        found: Result<FibResult<'a>, Errno>,
    ) -> (Result<Forward, Errno>, Option<SourceCheck>) {
        match form {
            Form::Output => (fib.output_answer_v4(key, flow, found), None),
            Form::Input(iif) => fib.input_answer_unchecked_v4(iif, key, flow, found),
        }
    }

    #[inline]
    fn lookup_one<'a>(fib: &'a Fib, flow: &Flow) -> Result<FibResult<'a>, Errno> {
        fib.fib_lookup(flow)
    }

    #[inline(always)]
    fn table_at<'a>(
        fib: &'a Fib,
        t: &'a Table,
        table: TableId,
        flow: &Flow,
        dst: u32,
        longest: Option<u32>,
    ) -> Result<FibResult<'a>, Miss> {
        fib.table_lookup_v4_at(t, table, flow, dst, longest)
    }

    /// `fib_lookup` while no IPv4 rule was ever added or deleted: the
    /// merged local+main lookup ([`Fib::merged_lookup_at`]), table default
    /// after it, for the whole burst.
    #[inline(always)]
    fn fast_path<'a>(
        fib: &'a Fib,
        flows: &[Flow],
        dsts: &[u32],
        found: &mut [Result<FibResult<'a>, Errno>],
    ) -> bool {
        if fib.custom_rules_v4 {
            return false;
        }
        let (local, main) = fib.merged_tables_v4();
        let n = flows.len();
        let mut local_slots = [None; BURST_CHUNK];
        let mut main_slots = [None; BURST_CHUNK];
        for (t, slots) in [(local, &mut local_slots), (main, &mut main_slots)] {
            if let Some(t) = t {
                t.longest_slots(dsts, &mut slots[..n]);
                slots[..n]
                    .iter()
                    .flatten()
                    .for_each(|&s| t.prefetch_entry(s));
            }
        }
        for k in 0..n {
            let (flow, dst) = (&flows[k], dsts[k]);
            let merged =
                fib.merged_lookup_at(flow, dst, local, main, local_slots[k], main_slots[k]);
            found[k] = fib.merged_fallback_v4(flow, merged);
        }
        true
    }
}

impl FibFamily for Ipv6 {
    type FlowKey = FlowKeyV6;
    type Answer = Forward6;
    type Found<'a> = Found6<'a>;
    const FAMILY: Family = Family::V6;
    const VALIDATES_SOURCES: bool = false;

    #[inline(always)]
    fn dst_bits(key: &FlowKeyV6) -> u128 {
        key.dst
    }

    #[inline(always)]
    fn family_table(t: &Table) -> &FamilyTable<u128> {
        &t.v6
    }

    #[inline(always)]
    fn prefetch(t: &FamilyTable<u128>, slot: u32) {
        t.prefetch_summary(slot);
    }

    #[inline(always)]
    fn flow(_fib: &Fib, form: Form, key: &FlowKeyV6) -> Result<Flow, Result<Forward6, Errno>> {
        Ok(match form {
            Form::Output => output_flow_v6(key),
            Form::Input(iif) => input_flow_v6(iif, key),
        })
    }

    #[inline(always)]
    fn answer<'a>(
        fib: &'a Fib,
        _form: Form,
        _key: &FlowKeyV6,
        flow: &Flow,
        found: Result<Found6<'a>, Errno>,
    ) -> (Result<Forward6, Errno>, Option<SourceCheck>) {
        // `ip6_route_input` validates no source (no rp_filter for IPv6).
        (fib.answer_v6(flow, found), None)
    }

    #[inline]
    fn lookup_one<'a>(fib: &'a Fib, flow: &Flow) -> Result<Found6<'a>, Errno> {
        fib.fib_lookup_v6_data(flow)
    }

    #[inline(always)]
    fn table_at<'a>(
        fib: &'a Fib,
        t: &'a Table,
        table: TableId,
        flow: &Flow,
        dst: u128,
        longest: Option<u32>,
    ) -> Result<Found6<'a>, Miss> {
        fib.table_lookup_v6_data_at(t, table, flow, dst, longest)
    }
}

/// A placeholder in the scratch array of source checks.
const NO_CHECK: SourceCheck = SourceCheck {
    src: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    dst: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    tos: 0,
    oif: 0,
    iif: 0,
};

/// A key's rule cursor once it is answered.
const ANSWERED: usize = usize::MAX;

impl Fib {
    /// [`Fib::lookup_output_batch_v4`]'s answers (the same, for every FIB
    /// and key), resolved as a burst: the LPM's lockstep walk over all keys
    /// of each table the rules send them to, then each key's semantics.
    /// For a forwarding worker's receive burst (32-256 packets); any length
    /// works. Allocates nothing.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
    ///     "link add d0 type ifb\nlink set d0 up\naddr add 10.0.0.1/24 dev d0\n\
    ///      route add 192.0.2.0/24 via 10.0.0.9\n", false).unwrap();
    /// let keys: Vec<FlowKeyV4> = ["192.0.2.7", "10.0.0.5", "198.51.100.1"]
    ///     .iter()
    ///     .map(|d| FlowKeyV4 { dst: u32::from(d.parse::<std::net::Ipv4Addr>().unwrap()), ..Default::default() })
    ///     .collect();
    /// let (mut burst, mut per_key) = (vec![Err(Errno::Inval); 3], vec![Err(Errno::Inval); 3]);
    /// fib.lookup_output_burst_v4(&keys, &mut burst);
    /// fib.lookup_output_batch_v4(&keys, &mut per_key);
    /// assert_eq!(burst, per_key);
    /// assert_eq!(burst[0].unwrap().gateway_addr(), Some("10.0.0.9".parse().unwrap()));
    /// assert_eq!(burst[2], Err(Errno::NetUnreach));
    /// ```
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_output_burst_v4(&self, keys: &[FlowKeyV4], out: &mut [Result<Forward, Errno>]) {
        self.burst::<Ipv4>(Form::Output, keys, out);
    }

    /// [`Fib::lookup_output_batch_v6`]'s answers, resolved as a burst (see
    /// [`Fib::lookup_output_burst_v4`]). Allocates nothing.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_output_burst_v6(&self, keys: &[FlowKeyV6], out: &mut [Result<Forward6, Errno>]) {
        self.burst::<Ipv6>(Form::Output, keys, out);
    }

    /// [`Fib::lookup_input_batch_v4`]'s answers for packets received on
    /// `iif`, resolved as a burst (see [`Fib::lookup_output_burst_v4`]).
    /// Allocates nothing.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_input_burst_v4(
        &self,
        iif: LinkIndex,
        keys: &[FlowKeyV4],
        out: &mut [Result<Forward, Errno>],
    ) {
        self.burst::<Ipv4>(Form::Input(iif), keys, out);
    }

    /// [`Fib::lookup_input_batch_v6`]'s answers for packets received on
    /// `iif`, resolved as a burst (see [`Fib::lookup_output_burst_v4`]).
    /// Allocates nothing.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_input_burst_v6(
        &self,
        iif: LinkIndex,
        keys: &[FlowKeyV6],
        out: &mut [Result<Forward6, Errno>],
    ) {
        self.burst::<Ipv6>(Form::Input(iif), keys, out);
    }

    /// A burst of `form` lookups of `keys` into `out`, chunk by chunk.
    fn burst<I: FibFamily>(
        &self,
        form: Form,
        keys: &[I::FlowKey],
        out: &mut [Result<I::Answer, Errno>],
    ) {
        assert_eq!(
            keys.len(),
            out.len(),
            "burst lookup: slices differ in length"
        );
        if let Form::Input(iif) = form {
            // As the per-key input batches: no such link, no answer.
            if !self.links.contains_key(&iif) {
                out.fill(Err(Errno::NoDev));
                return;
            }
        }
        for (keys, out) in keys.chunks(BURST_CHUNK).zip(out.chunks_mut(BURST_CHUNK)) {
            self.burst_chunk::<I>(form, keys, out);
        }
    }

    /// Up to [`BURST_CHUNK`] keys: their flows, their lookups together,
    /// their answers.
    #[inline(always)]
    fn burst_chunk<I: FibFamily>(
        &self,
        form: Form,
        keys: &[I::FlowKey],
        out: &mut [Result<I::Answer, Errno>],
    ) {
        debug_assert!(keys.len() <= BURST_CHUNK && keys.len() == out.len());
        let unset = Flow::output(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        let mut flows = [unset; BURST_CHUNK];
        let mut dsts = [I::Bits::default(); BURST_CHUNK];
        // Which key each flow is of: the keys answered without a lookup
        // are left out of the lookups.
        let mut key_of = [0u8; BURST_CHUNK];
        let mut n = 0;
        for (i, (key, out)) in keys.iter().zip(out.iter_mut()).enumerate() {
            match I::flow(self, form, key) {
                Ok(flow) => {
                    flows[n] = flow;
                    dsts[n] = I::dst_bits(key);
                    key_of[n] = i as u8;
                    n += 1;
                }
                Err(answer) => *out = answer,
            }
        }
        let mut found = [Err(Errno::NetUnreach); BURST_CHUNK];
        self.resolve_burst::<I>(&flows[..n], &dsts[..n], &mut found[..n]);
        let (flows, key_of, found) = (&flows[..n], &key_of[..n], &found[..n]);
        if I::VALIDATES_SOURCES && matches!(form, Form::Input(_)) {
            self.answers_checked::<I>(form, keys, flows, key_of, found, out);
            return;
        }
        for ((flow, &i), found) in flows.iter().zip(key_of).zip(found) {
            let i = usize::from(i);
            out[i] = I::answer(self, form, &keys[i], flow, *found).0;
        }
    }

    /// The answers of a chunk whose answers may wait on source checks:
    /// those are held in `out` until their checks, made together, let them
    /// stand. Apart from [`Fib::burst_chunk`], so that the other forms do
    /// not set up its scratch arrays.
    #[inline(never)]
    fn answers_checked<'a, I: FibFamily>(
        &'a self,
        form: Form,
        keys: &[I::FlowKey],
        flows: &[Flow],
        key_of: &[u8],
        found: &[Result<I::Found<'a>, Errno>],
        out: &mut [Result<I::Answer, Errno>],
    ) {
        let mut checks = [NO_CHECK; BURST_CHUNK];
        let mut checked = [0u8; BURST_CHUNK];
        let mut c = 0;
        for ((flow, &i), found) in flows.iter().zip(key_of).zip(found) {
            let i = usize::from(i);
            let (answer, check) = I::answer(self, form, &keys[i], flow, *found);
            out[i] = answer;
            if let Some(check) = check {
                checks[c] = check;
                checked[c] = i as u8;
                c += 1;
            }
        }
        if c > 0 {
            let mut verdicts = [Ok(false); BURST_CHUNK];
            self.validate_sources_v4(&checks[..c], &mut verdicts[..c]);
            for (&i, verdict) in checked[..c].iter().zip(&verdicts[..c]) {
                if let Err(e) = verdict {
                    out[usize::from(i)] = Err(*e);
                }
            }
        }
    }

    /// [`Fib::validate_source_v4`] of every check of `checks` into the
    /// same position of `verdicts`, the reverse lookups made as one burst
    /// (`fib_validate_source`'s `fib_lookup` of the source, per packet in
    /// the kernel): the same verdicts.
    fn validate_sources_v4(&self, checks: &[SourceCheck], verdicts: &mut [Result<bool, Errno>]) {
        debug_assert!(checks.len() <= BURST_CHUNK && checks.len() == verdicts.len());
        let unset = Flow::output(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        let mut flows = [unset; BURST_CHUNK];
        let mut dsts = [0u32; BURST_CHUNK];
        let mut check_of = [0u8; BURST_CHUNK];
        let mut n = 0;
        for (j, (check, verdict)) in checks.iter().zip(verdicts.iter_mut()).enumerate() {
            let IpAddr::V4(src) = check.src else {
                // Not an IPv4 input's check (none is made): taken alone.
                *verdict = self.validate_source_v4(check);
                continue;
            };
            match self.source_check_flow_v4(check) {
                Ok(flow) => {
                    flows[n] = flow;
                    dsts[n] = u32::from(src);
                    check_of[n] = j as u8;
                    n += 1;
                }
                Err(done) => *verdict = done,
            }
        }
        let mut found = [Err(Errno::NetUnreach); BURST_CHUNK];
        self.resolve_burst::<Ipv4>(&flows[..n], &dsts[..n], &mut found[..n]);
        for ((flow, &j), found) in flows[..n].iter().zip(&check_of[..n]).zip(&found[..n]) {
            let j = usize::from(j);
            verdicts[j] = self.source_check_verdict_v4(&checks[j], *flow, *found);
        }
    }

    /// `fib_lookup` of every flow of `flows` (destinations `dsts`) into
    /// the same position of `found`, which holds `NetUnreach` (what a walk
    /// through every rule without an answer gives) on entry: the rules in
    /// order, each table walked once for every key that reaches it.
    #[inline(always)]
    fn resolve_burst<'a, I: FibFamily>(
        &'a self,
        flows: &[Flow],
        dsts: &[I::Bits],
        found: &mut [Result<I::Found<'a>, Errno>],
    ) {
        let n = flows.len();
        debug_assert!(n <= BURST_CHUNK && dsts.len() == n && found.len() == n);
        if I::fast_path(self, flows, dsts, found) {
            return;
        }
        let rules = self.lookup_rules(I::FAMILY);
        // The keys still unanswered, and per key the index of the next
        // rule it reads (a goto moves it ahead; ANSWERED once answered).
        let mut pending = [0u8; BURST_CHUNK];
        for (k, p) in pending[..n].iter_mut().enumerate() {
            *p = k as u8;
        }
        let mut waiting = n;
        let mut next_rule = [0usize; BURST_CHUNK];
        // The keys this rule sends to its table, and their destinations.
        let mut wave = [0u8; BURST_CHUNK];
        let mut wave_dsts = [I::Bits::default(); BURST_CHUNK];
        let mut slots = [None; BURST_CHUNK];
        for (r, rule) in rules.iter().enumerate() {
            if waiting == 0 {
                break;
            }
            let mut table = None;
            let mut in_wave = 0;
            let mut kept = 0;
            for p in 0..waiting {
                let k = usize::from(pending[p]);
                if next_rule[k] == ANSWERED {
                    continue;
                }
                if next_rule[k] == r {
                    next_rule[k] = r + 1;
                    match self.rule_step(rules, rule, &flows[k]) {
                        RuleStep::Next => {}
                        RuleStep::Jump(j) if j > r => next_rule[k] = j,
                        RuleStep::Jump(_) => {
                            // The kernel refuses a goto that does not lead
                            // ahead (`fib_nl_newrule`), and so does the
                            // writer: never here, but if so, the per-key
                            // walk, which follows it.
                            found[k] = I::lookup_one(self, &flows[k]);
                            next_rule[k] = ANSWERED;
                            continue;
                        }
                        RuleStep::End(e) => {
                            found[k] = Err(e);
                            next_rule[k] = ANSWERED;
                            continue;
                        }
                        RuleStep::Lookup(id) => {
                            table = Some(id);
                            wave[in_wave] = k as u8;
                            wave_dsts[in_wave] = dsts[k];
                            in_wave += 1;
                        }
                    }
                }
                pending[kept] = k as u8;
                kept += 1;
            }
            waiting = kept;
            let Some(id) = table else {
                continue;
            };
            // A rule naming a table that does not exist is passed over.
            let Some(t) = self.tables.get(&id) else {
                continue;
            };
            let family = I::family_table(t);
            family.longest_slots(&wave_dsts[..in_wave], &mut slots[..in_wave]);
            slots[..in_wave]
                .iter()
                .flatten()
                .for_each(|&s| I::prefetch(family, s));
            for (&k, &slot) in wave[..in_wave].iter().zip(&slots[..in_wave]) {
                let k = usize::from(k);
                let res = I::table_at(self, t, id, &flows[k], dsts[k], slot);
                if let Some(answer) = table_verdict(rule, res, false) {
                    found[k] = answer;
                    next_rule[k] = ANSWERED;
                }
            }
        }
    }
}
