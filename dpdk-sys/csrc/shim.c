#include <rte_config.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ethdev.h>
#include <rte_ring.h>
#include <rte_thash.h>
#include "shim.h"

uint16_t dg_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{ return rte_eth_rx_burst(port, queue, pkts, n); }
uint16_t dg_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{ return rte_eth_tx_burst(port, queue, pkts, n); }

struct rte_mbuf *dg_pktmbuf_alloc(struct rte_mempool *mp) { return rte_pktmbuf_alloc(mp); }
int dg_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **pkts, unsigned n)
{ return rte_pktmbuf_alloc_bulk(mp, pkts, n); }
void dg_pktmbuf_free(struct rte_mbuf *m) { rte_pktmbuf_free(m); }
void dg_pktmbuf_free_bulk(struct rte_mbuf **pkts, unsigned n) { rte_pktmbuf_free_bulk(pkts, n); }
char *dg_pktmbuf_prepend(struct rte_mbuf *m, uint16_t len) { return rte_pktmbuf_prepend(m, len); }
char *dg_pktmbuf_adj(struct rte_mbuf *m, uint16_t len) { return rte_pktmbuf_adj(m, len); }
char *dg_pktmbuf_append(struct rte_mbuf *m, uint16_t len) { return rte_pktmbuf_append(m, len); }
int dg_pktmbuf_trim(struct rte_mbuf *m, uint16_t len) { return rte_pktmbuf_trim(m, len); }
uint16_t dg_pktmbuf_headroom(const struct rte_mbuf *m) { return rte_pktmbuf_headroom(m); }
uint16_t dg_pktmbuf_tailroom(const struct rte_mbuf *m) { return rte_pktmbuf_tailroom(m); }
unsigned dg_mempool_avail_count(const struct rte_mempool *mp) { return rte_mempool_avail_count(mp); }

unsigned dg_lcore_id(void) { return rte_lcore_id(); }
uint64_t dg_rdtsc(void) { return rte_rdtsc(); }
uint64_t dg_tsc_hz(void) { return rte_get_tsc_hz(); }
int dg_errno(void) { return rte_errno; }

unsigned dg_ring_enqueue_burst(struct rte_ring *r, void *const *objs, unsigned n)
{ return rte_ring_enqueue_burst(r, objs, n, NULL); }
unsigned dg_ring_dequeue_burst(struct rte_ring *r, void **objs, unsigned n)
{ return rte_ring_dequeue_burst(r, objs, n, NULL); }
unsigned dg_ring_count(const struct rte_ring *r) { return rte_ring_count(r); }
uint32_t dg_softrss(uint32_t *input_tuple, uint32_t input_len, const uint8_t *rss_key)
{ return rte_softrss(input_tuple, input_len, rss_key); }


const uint64_t DG_ETH_RSS_IP = RTE_ETH_RSS_IP;
const uint64_t DG_ETH_RSS_TCP = RTE_ETH_RSS_TCP;
const uint64_t DG_ETH_RSS_UDP = RTE_ETH_RSS_UDP;
const uint64_t DG_ETH_RSS_IPV4 = RTE_ETH_RSS_IPV4;
const uint64_t DG_ETH_RSS_FRAG_IPV4 = RTE_ETH_RSS_FRAG_IPV4;
const uint64_t DG_ETH_RSS_NONFRAG_IPV4_TCP = RTE_ETH_RSS_NONFRAG_IPV4_TCP;
const uint64_t DG_ETH_RSS_NONFRAG_IPV4_UDP = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
const uint64_t DG_ETH_RSS_NONFRAG_IPV4_OTHER = RTE_ETH_RSS_NONFRAG_IPV4_OTHER;
const uint64_t DG_ETH_RSS_L3_SRC_ONLY = RTE_ETH_RSS_L3_SRC_ONLY;
const uint64_t DG_ETH_RSS_L3_DST_ONLY = RTE_ETH_RSS_L3_DST_ONLY;
const uint64_t DG_ETH_RX_OFFLOAD_CHECKSUM = RTE_ETH_RX_OFFLOAD_CHECKSUM;
const uint64_t DG_ETH_TX_OFFLOAD_IPV4_CKSUM = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
const uint64_t DG_ETH_TX_OFFLOAD_TCP_CKSUM = RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
const uint64_t DG_ETH_TX_OFFLOAD_UDP_CKSUM = RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
const uint64_t DG_ETH_TX_OFFLOAD_MBUF_FAST_FREE = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
const uint64_t DG_MBUF_F_TX_IPV4 = RTE_MBUF_F_TX_IPV4;
const uint64_t DG_MBUF_F_TX_IP_CKSUM = RTE_MBUF_F_TX_IP_CKSUM;
const uint64_t DG_MBUF_F_TX_TCP_CKSUM = RTE_MBUF_F_TX_TCP_CKSUM;
const uint64_t DG_MBUF_F_TX_UDP_CKSUM = RTE_MBUF_F_TX_UDP_CKSUM;
const uint64_t DG_MBUF_F_RX_RSS_HASH = RTE_MBUF_F_RX_RSS_HASH;
const uint32_t DG_ETH_LINK_SPEED_AUTONEG = RTE_ETH_LINK_SPEED_AUTONEG;
