//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
)

// TestDeployedStaticEgress deploys the stack with StaticEgress
// existing-subnets into a network made with LocalStack's EC2 API (moto:
// records, no packets): a private subnet whose route table sends 0.0.0.0/0
// to a NAT gateway holding an Elastic IP. The deliver function gets the
// subnet and security group as its VpcConfig, the other functions none,
// the stack publishes the subnet, and herald egress --stack follows the
// route to the NAT gateway's address. (create-vpc does not deploy in
// LocalStack, which builds no AWS::EC2::EIP: docs/deploy.md#static-egress.)
func TestDeployedStaticEgress(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, os.Getenv("AWS_ENDPOINT_URL"), "run the integration tests with `make test`, which starts the local stack")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	ec2c, cfn, lambdac := ec2.NewFromConfig(awsCfg), cloudformation.NewFromConfig(awsCfg), lambda.NewFromConfig(awsCfg)

	vpc, err := ec2c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.77.0.0/16")})
	require.NoError(t, err)
	vpcID := vpc.Vpc.VpcId
	subnet := func(cidr string) *string {
		out, err := ec2c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpcID, CidrBlock: aws.String(cidr)})
		require.NoError(t, err)
		return out.Subnet.SubnetId
	}
	public, private := subnet("10.77.0.0/20"), subnet("10.77.48.0/20")
	eip, err := ec2c.AllocateAddress(ctx, &ec2.AllocateAddressInput{Domain: ec2types.DomainTypeVpc})
	require.NoError(t, err)
	nat, err := ec2c.CreateNatGateway(ctx, &ec2.CreateNatGatewayInput{SubnetId: public, AllocationId: eip.AllocationId})
	require.NoError(t, err)
	rt, err := ec2c.CreateRouteTable(ctx, &ec2.CreateRouteTableInput{VpcId: vpcID})
	require.NoError(t, err)
	_, err = ec2c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: rt.RouteTable.RouteTableId, DestinationCidrBlock: aws.String("0.0.0.0/0"), NatGatewayId: nat.NatGateway.NatGatewayId})
	require.NoError(t, err)
	_, err = ec2c.AssociateRouteTable(ctx, &ec2.AssociateRouteTableInput{RouteTableId: rt.RouteTable.RouteTableId, SubnetId: private})
	require.NoError(t, err)
	sg, err := ec2c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("herald-" + randHex(3)), Description: aws.String("herald deliver"), VpcId: vpcID})
	require.NoError(t, err)

	stack := deployStackPrefix + "egress-" + randHex(3)
	t.Cleanup(func() {
		_, _ = cfn.DeleteStack(context.Background(), &cloudformation.DeleteStackInput{StackName: aws.String(stack)})
	})
	start := time.Now()
	deployLocal(ctx, t, stack, `StaticEgress="existing-subnets" EgressSubnetIds="`+aws.ToString(private)+`" EgressSecurityGroupIds="`+aws.ToString(sg.GroupId)+`"`)
	t.Logf("scripts/deploy-local.sh with StaticEgress existing-subnets took %s", time.Since(start).Round(time.Millisecond))
	d := readStack(ctx, t, cfn, lambdac, stack)

	require.Equal(t, aws.ToString(private), d.outputs["EgressSubnetIds"])
	require.NotContains(t, d.outputs, "EgressIpAddresses", "only a VPC the stack creates has that output")
	for logical, fn := range d.functions {
		if logical == "DeliverFunction" {
			require.NotNil(t, fn.VpcConfig)
			require.Equal(t, []string{aws.ToString(private)}, fn.VpcConfig.SubnetIds)
			require.Equal(t, []string{aws.ToString(sg.GroupId)}, fn.VpcConfig.SecurityGroupIds)
			require.Equal(t, aws.ToString(vpcID), aws.ToString(fn.VpcConfig.VpcId))
			continue
		}
		require.True(t, fn.VpcConfig == nil || len(fn.VpcConfig.SubnetIds) == 0, "%s stays outside the VPC", logical)
	}

	out, err := exec.CommandContext(ctx, heraldBinary(t), "egress", "--json", "--stack", stack).Output()
	require.NoError(t, err, "herald egress: %s", out)
	var report struct {
		Addresses []struct {
			IP         string `json:"ip"`
			NatGateway string `json:"nat_gateway"`
		} `json:"addresses"`
		Source string `json:"source"`
	}
	require.NoError(t, json.Unmarshal(out, &report), "%s", out)
	require.Equal(t, "ec2", report.Source)
	require.Len(t, report.Addresses, 1, "%s", out)
	require.Equal(t, aws.ToString(eip.PublicIp), report.Addresses[0].IP, "%s", out)
	require.Equal(t, aws.ToString(nat.NatGateway.NatGatewayId), report.Addresses[0].NatGateway)
}
